// The network drawn as a graph: its nodes in layers (START at the top, each node one layer below
// the first node that reaches it), and its edges as SVG arrows, labelled with their conditions.
// Nodes are HTML elements (so they can be highlighted and clicked as before); the edges are
// drawn under them once the nodes are placed and measured.

import { el } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const LAYER_GAP = 56; // vertical space between two layers, room for an edge's label
const NODE_GAP = 18; // horizontal space between two nodes of one layer
const MAX_EDGES = 200;

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  return node;
}

// Each node's layer: its distance from the first node (START) along the edges, breadth first;
// a node no edge reaches from there goes in the layer below START.
export function layers(nodes, edges) {
  const layer = new Map();
  if (!nodes.length) return layer;
  const next = new Map(nodes.map((n) => [n.id, []]));
  for (const edge of edges) if (next.has(edge.source)) next.get(edge.source).push(edge.target);
  const start = nodes[0].id;
  layer.set(start, 0);
  const queue = [start];
  while (queue.length) {
    const id = queue.shift();
    for (const target of next.get(id) || []) {
      if (!layer.has(target)) {
        layer.set(target, layer.get(id) + 1);
        queue.push(target);
      }
    }
  }
  for (const node of nodes) if (!layer.has(node.id)) layer.set(node.id, 1);
  return layer;
}

// Draws `graph` into `box`; returns the node elements by node id.
export function drawGraph(box, graph, makeNode) {
  const canvas = el("div", { class: "graph-canvas" });
  const lines = svg("svg", { class: "graph-edges" });
  canvas.append(lines);
  box.replaceChildren(canvas);
  const elements = new Map();
  for (const node of graph.nodes) {
    const item = makeNode(node);
    canvas.append(item);
    elements.set(node.id, item);
  }
  const layer = layers(graph.nodes, graph.edges);
  const rows = [];
  for (const node of graph.nodes) {
    const index = layer.get(node.id);
    (rows[index] = rows[index] || []).push(node.id);
  }
  // place: each layer a row, centred on the widest
  const sizes = new Map();
  for (const [id, item] of elements) sizes.set(id, { w: item.offsetWidth, h: item.offsetHeight });
  const widths = rows.map((row) => (row || []).reduce((sum, id) => sum + sizes.get(id).w, 0) + NODE_GAP * ((row || []).length - 1));
  const width = Math.max(0, ...widths) + 2 * NODE_GAP;
  const at = new Map();
  let top = 8;
  rows.forEach((row, i) => {
    if (!row) return;
    let left = (width - widths[i]) / 2;
    const height = Math.max(...row.map((id) => sizes.get(id).h));
    for (const id of row) {
      const { w, h } = sizes.get(id);
      at.set(id, { x: left, y: top, w, h });
      const item = elements.get(id);
      item.style.left = left + "px";
      item.style.top = top + "px";
      left += w + NODE_GAP;
    }
    top += height + LAYER_GAP;
  });
  const height = top - LAYER_GAP + 8;
  canvas.style.width = width + "px";
  canvas.style.height = height + "px";
  lines.setAttribute("width", width);
  lines.setAttribute("height", height);
  lines.append(arrowHead());
  for (const edge of graph.edges.slice(0, MAX_EDGES)) {
    const from = at.get(edge.source);
    const to = at.get(edge.target);
    if (!from || !to) continue;
    lines.append(drawEdge(edge, from, to, layer.get(edge.source) >= layer.get(edge.target)));
  }
  return elements;
}

function arrowHead() {
  const defs = svg("defs", {});
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrow-head" }));
  defs.append(marker);
  return defs;
}

// An edge down to a later layer is a straight arrow; one back up (a loop) bends out to the side.
function drawEdge(edge, from, to, back) {
  const group = svg("g", { class: "edge" + (edge.dotted ? " dotted" : ""), "data-source": edge.source, "data-target": edge.target });
  let d;
  let labelAt;
  if (!back) {
    const x1 = from.x + from.w / 2;
    const y1 = from.y + from.h;
    const x2 = to.x + to.w / 2;
    const y2 = to.y;
    d = `M ${x1} ${y1} L ${x2} ${y2}`;
    labelAt = { x: (x1 + x2) / 2, y: (y1 + y2) / 2 };
  } else {
    const x1 = from.x + from.w;
    const y1 = from.y + from.h / 2;
    const x2 = to.x + to.w;
    const y2 = to.y + to.h / 2;
    const bend = Math.max(x1, x2) + 30;
    d = `M ${x1} ${y1} C ${bend} ${y1}, ${bend} ${y2}, ${x2} ${y2}`;
    labelAt = { x: bend - 8, y: (y1 + y2) / 2 };
  }
  group.append(svg("path", { d, class: "edge-line", "marker-end": "url(#arrow)" }));
  if (edge.label) {
    const label = svg("text", { x: labelAt.x, y: labelAt.y, class: "edge-label", "text-anchor": "middle" });
    label.textContent = edge.label;
    group.append(label);
  }
  return group;
}
