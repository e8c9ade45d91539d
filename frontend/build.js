// Bundles plotly_charts.js into dist/plotly-charts.min.js, a browser script
// that sets window.Plotly, as plotly.js builds its own dist files. The
// banner names the plotly.js version: the app serves the file only when it
// matches the version of the plotly.js in the Python wheel (web/views/assets.py).
"use strict";

const fs = require("fs");
const path = require("path");
const zlib = require("zlib");
const esbuild = require("esbuild");

const version = require("plotly.js/package.json").version;
const outfile = path.join(__dirname, "dist", "plotly-charts.min.js");

esbuild
  .build({
    entryPoints: [path.join(__dirname, "plotly_charts.js")],
    outfile,
    bundle: true,
    minify: true,
    format: "iife",
    globalName: "Plotly",
    target: "es2016",
    define: { global: "window" },
    // plotly.js registers maplibre's stylesheet for map traces, which this
    // bundle leaves out
    loader: { ".css": "empty" },
    banner: { js: `/*! plotly.js v${version} (scatter, bar, box, heatmap, scatterpolar) | MIT */` },
    logLevel: "warning",
  })
  .then(() => {
    const body = fs.readFileSync(outfile);
    const gzipped = zlib.gzipSync(body, { level: 9 }).length;
    const kb = (bytes) => `${Math.round(bytes / 1024)} kB`;
    const shown = path.relative(process.cwd(), outfile);
    console.log(`plotly.js v${version}: ${shown} ${kb(body.length)}, ${kb(gzipped)} gzipped`);
  })
  .catch(() => process.exit(1));
