// Text and selector predicates, evaluated in the isolated world with TEXTS and SELECTORS
// defined before this body. Returns one boolean per predicate, in order.
const body = document.body ? document.body.innerText : "";
const texts = TEXTS.map((t) => body.includes(t));
const selectors = SELECTORS.map((s) => {
  try {
    return document.querySelector(s) !== null;
  } catch (e) {
    return false;
  }
});
return { texts, selectors };
