// Package report turns a run store into BeLUGA's Table 3 (Markdown, LaTeX, CSV)
// and Figure 1 heatmaps (PNG, SVG, PDF).
package report
