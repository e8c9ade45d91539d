// plotly.js with the trace types web/presentation/charts.py draws and no
// other (scatter is part of the core). A chart of a new type needs its
// module here: tests/web/views/test_assets.py compares the two lists.
"use strict";

var Plotly = require("plotly.js/lib/core");

Plotly.register([
  require("plotly.js/lib/bar"),
  require("plotly.js/lib/box"),
  require("plotly.js/lib/heatmap"),
  require("plotly.js/lib/scatterpolar"),
]);

module.exports = Plotly;
