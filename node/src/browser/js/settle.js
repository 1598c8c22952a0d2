// The page's readiness: ready state, element count, and whether our marker from the last look
// is still there (gone means a new document). Evaluated in the isolated world.
const fresh = !window.__foragerMarker;
window.__foragerMarker = true;
return {
  ready: document.readyState,
  nodes: document.getElementsByTagName("*").length,
  new_document: fresh,
  url: location.href,
};
