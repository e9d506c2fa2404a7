#include "formats/flamegraph_script.hpp"

namespace dapprof::formats::flamegraph {

const std::string_view kStyle = R"CSS(
text { font-family: Verdana, "DejaVu Sans", sans-serif; font-size: 12px; fill: rgb(0,0,0); }
#title { text-anchor: middle; font-size: 17px; }
.ctl { cursor: pointer; fill: rgb(0,0,160); }
.ctl:hover { text-decoration: underline; }
.hide { display: none; }
g.f { cursor: pointer; }
g.f text { pointer-events: none; }
g.f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }
g.p rect { opacity: 0.5; }
g.m rect { fill: rgb(230,0,230); }
)CSS";

const std::string_view kScript = R"JS(
"use strict";
var details, matchedtxt, unzoombtn, searchbtn, frames = [], searching = null;
function init(evt) {
  details = document.getElementById("details").firstChild;
  matchedtxt = document.getElementById("matched");
  unzoombtn = document.getElementById("unzoom");
  searchbtn = document.getElementById("search");
  frames = Array.prototype.slice.call(document.querySelectorAll("g.f"));
  frames.forEach(function (g) {
    var title = g.querySelector("title").textContent.replace(/\n/g, " | ");
    g.addEventListener("mouseover", function () { details.nodeValue = title; });
    g.addEventListener("mouseout", function () { details.nodeValue = " "; });
    g.addEventListener("click", function () { zoom(g); });
  });
  unzoombtn.addEventListener("click", unzoom);
  searchbtn.addEventListener("click", searchPrompt);
  document.addEventListener("keydown", function (e) {
    if ((e.ctrlKey || e.metaKey) && e.key === "f") { e.preventDefault(); searchPrompt(); }
    if (e.key === "Escape") { unzoom(); clearSearch(); }
  });
}
function num(g, k) { return parseFloat(g.getAttribute("data-" + k)); }
function fit(g, w) {
  var t = g.querySelector("text"), name = g.getAttribute("data-n");
  var n = Math.floor((w - 6) / CHARW), chars = Array.from(name);
  if (n < 3) t.textContent = "";
  else t.textContent = chars.length <= n ? name : chars.slice(0, n - 2).join("") + "..";
}
function place(g, x, w) {
  g.querySelector("rect").setAttribute("x", x.toFixed(4));
  g.querySelector("rect").setAttribute("width", w.toFixed(4));
  g.querySelector("text").setAttribute("x", (x + 3).toFixed(4));
  fit(g, w);
}
function zoom(node) {
  var zx = num(node, "x"), zw = num(node, "w"), zd = num(node, "d");
  var scale = (W - 2 * XPAD) / zw, eps = 1e-6;
  frames.forEach(function (g) {
    var x = num(g, "x"), w = num(g, "w"), d = num(g, "d");
    g.classList.remove("p");
    if (d < zd) {
      // Ancestors of the zoomed frame stay visible, full width and faded.
      if (x <= zx + eps && x + w >= zx + zw - eps) {
        g.style.display = ""; g.classList.add("p"); place(g, XPAD, W - 2 * XPAD);
      } else {
        g.style.display = "none";
      }
    } else if (x >= zx - eps && x + w <= zx + zw + eps) {
      g.style.display = ""; place(g, XPAD + (x - zx) * scale, w * scale);
    } else {
      g.style.display = "none";
    }
  });
  unzoombtn.classList.remove("hide");
}
function unzoom() {
  frames.forEach(function (g) {
    g.style.display = ""; g.classList.remove("p"); place(g, num(g, "x"), num(g, "w"));
  });
  unzoombtn.classList.add("hide");
}
function searchPrompt() {
  if (searching !== null) { clearSearch(); return; }
  var term = prompt("Search frames (regular expression):", "");
  if (term) search(term);
}
function search(term) {
  var re;
  try { re = new RegExp(term); } catch (e) { alert("Invalid regular expression: " + e.message); return; }
  var hits = [];
  frames.forEach(function (g) {
    if (re.test(g.getAttribute("data-n"))) { g.classList.add("m"); hits.push([num(g, "x"), num(g, "w")]); }
    else g.classList.remove("m");
  });
  // A match nested in another match is counted once: measure the union of their x ranges.
  hits.sort(function (a, b) { return a[0] - b[0]; });
  var covered = 0, end = -Infinity;
  hits.forEach(function (h) {
    var s = Math.max(h[0], end), e = h[0] + h[1];
    if (e > s) covered += e - s;
    end = Math.max(end, e);
  });
  searching = term;
  searchbtn.firstChild.nodeValue = "Reset Search";
  matchedtxt.firstChild.nodeValue = "Matched: " + (100 * covered / (W - 2 * XPAD)).toFixed(2) + "% of samples";
  matchedtxt.classList.remove("hide");
}
function clearSearch() {
  frames.forEach(function (g) { g.classList.remove("m"); });
  searching = null;
  searchbtn.firstChild.nodeValue = "Search";
  matchedtxt.classList.add("hide");
}
)JS";

}  // namespace dapprof::formats::flamegraph
