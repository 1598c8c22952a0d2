// The page's readiness: ready state, element count, images still loading, and whether our
// marker from the last look is still there (gone means a new document). Evaluated in the
// isolated world. An image the page added takes its place only once loaded (from the network
// the first time, from the cache on a replay): a look before that sees another page. Lazy
// images off screen never load, so they are not waited for.
const fresh = !window.__foragerMarker;
window.__foragerMarker = true;
return {
  ready: document.readyState,
  nodes: document.getElementsByTagName("*").length,
  loading_images: Array.from(document.images).filter((img) => !img.complete && img.loading !== "lazy").length,
  new_document: fresh,
  url: location.href,
};
