// The knowledge graph's neighbourhood view: reads the elements from this server as JSON and
// draws them with cytoscape.js (names are drawn on a canvas, never inserted as HTML).
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var box = document.getElementById("graph");
  if (!box || typeof cytoscape !== "function") { return; }
  fetch(box.getAttribute("data-src"), { credentials: "same-origin", headers: { "Accept": "application/json" } })
    .then(function (answer) {
      if (!answer.ok) { throw new Error("HTTP " + answer.status); }
      return answer.json();
    })
    .then(function (body) {
      var cy = cytoscape({
        container: box,
        elements: body.elements,
        layout: { name: "cose", animate: false, padding: 30, nodeRepulsion: 9000 },
        wheelSensitivity: 0.3,
        style: [
          { selector: "node", style: { "label": "data(label)", "background-color": "#6d8fd6",
            "color": "#1d2330", "font-size": 12, "text-valign": "bottom", "text-margin-y": 4,
            "width": 22, "height": 22, "text-wrap": "ellipsis", "text-max-width": 160 } },
          { selector: "node[?center]", style: { "background-color": "#2f5fd0", "width": 34,
            "height": 34, "font-weight": "bold" } },
          { selector: "edge", style: { "label": "data(label)", "curve-style": "bezier",
            "target-arrow-shape": "triangle", "width": 1.5, "line-color": "#9aa5b8",
            "target-arrow-color": "#9aa5b8", "font-size": 10, "color": "#5d6676",
            "text-rotation": "autorotate", "text-background-color": "#ffffff",
            "text-background-opacity": 0.8 } },
          { selector: "edge[?retired]", style: { "line-style": "dashed", "opacity": 0.6 } }
        ]
      });
      cy.on("tap", "node", function (event) {
        var node = event.target;
        if (!node.data("center")) { window.location.assign(box.getAttribute("data-open") + encodeURIComponent(node.id())); }
      });
      box.setAttribute("data-ready", String(cy.nodes().length));
    })
    .catch(function (error) {
      box.textContent = "The graph could not be loaded: " + error.message;
      box.setAttribute("data-ready", "error");
    });
});
