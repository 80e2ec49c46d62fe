// Loaded blocking in <head>: applies the reader's saved theme before the first paint.
(function () {
  try {
    var saved = window.localStorage.getItem("carnet-theme");
    if (saved === "dark" || saved === "light") document.documentElement.dataset.theme = saved;
  } catch (e) { /* storage disabled: follow the system */ }
})();
