// Text and selector predicates, evaluated in the isolated world with TEXTS and SELECTORS
// defined before this body (after the prelude). Returns one boolean per predicate, in order.
// Text counts in same-origin frames too, and a selector may step into shadow roots and frames
// as forager's own CSS paths do (`host >>> inner`): what a person sees is there.
const body = framesText();
const texts = TEXTS.map((t) => body.includes(t));
const selectors = SELECTORS.map((s) => resolveCss(s).length > 0);
return { texts, selectors };
