package htmlreport

// css is the report's only style sheet. Charts carry light-scheme colours
// as presentation attributes (so a viewer without CSS still shows them);
// these rules override them for the dark scheme, and force the light
// scheme on paper.
const css = `
:root{--bg:#fff;--fg:#1b1b1b;--muted:#666;--rule:#ddd;--frame:#888;--panel:#f6f6f6;
--s0:#0072b2;--s1:#d55e00;--s2:#009e73;--s3:#cc79a7;--s4:#e69f00;--s5:#56b4e9;--good:#1a7f37;--bad:#c62828;--diag:#0072b2;--off:#d55e00}
@media (prefers-color-scheme:dark){:root{--bg:#15171a;--fg:#e6e6e6;--muted:#9a9a9a;--rule:#33373d;--frame:#777;--panel:#1f2227;
--s0:#56b4e9;--s1:#f08a4b;--s2:#3ccf9f;--s3:#e19ccb;--s4:#f0c05a;--s5:#9fd3f5;--good:#5fd27a;--bad:#ff6b6b;--diag:#56b4e9;--off:#f08a4b}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1180px;padding:16px 20px 40px;background:var(--bg);color:var(--fg);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif}
h1{font-size:22px;margin:4px 0 10px}h2{font-size:19px;margin:28px 0 8px;padding-top:10px;border-top:2px solid var(--rule)}
h3{font-size:15px;margin:18px 0 6px}
code{font:12.5px ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace}
.muted{color:var(--muted);font-weight:normal}
table{border-collapse:collapse;margin:6px 0;font-size:13px}
th,td{border-bottom:1px solid var(--rule);padding:3px 8px;text-align:left;vertical-align:top}
th{font-weight:600;background:var(--panel)}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.ci{color:var(--muted);font-size:12px}
.scroll{overflow-x:auto;max-width:100%}
.key{display:inline-block;width:10px;height:10px;border-radius:2px;vertical-align:baseline;background:var(--s0)}
.key.s1{background:var(--s1)}.key.s2{background:var(--s2)}.key.s3{background:var(--s3)}.key.s4{background:var(--s4)}.key.s5{background:var(--s5)}
nav ul{list-style:none;padding:0;margin:8px 0;display:flex;flex-wrap:wrap;gap:4px 16px}
a{color:var(--s0)}
.verdict{font-size:15px;padding:6px 10px;border-left:4px solid var(--frame);background:var(--panel)}
.v-regressed{border-color:var(--bad)}.v-improved{border-color:var(--good)}
.better{color:var(--good);font-weight:600}.worse{color:var(--bad);font-weight:600}
.note{color:var(--muted)}
.legend{margin:4px 0}
.charts{display:flex;flex-wrap:wrap;gap:12px 24px;align-items:flex-start}
.side{flex:1 1 300px;max-width:560px}
figure{margin:4px 0;break-inside:avoid;page-break-inside:avoid}
figure.wide{overflow-x:auto;max-width:100%}
figcaption{font-size:12px;color:var(--muted);text-align:center;max-width:380px;margin:0 auto}
figure.wide figcaption{text-align:left;max-width:none;margin:0}
svg.chart{max-width:100%;height:auto;display:block;background:var(--bg)}
figure.wide svg.chart{max-width:none}
svg text{fill:var(--fg);font-family:system-ui,"DejaVu Sans",Arial,sans-serif}
svg .tick,svg .count{font-size:10px}svg .axis{font-size:11px}svg .cnum{fill:var(--fg)}svg .cnum.on{fill:#fff}
svg .lab{font-weight:700}
svg .grid{stroke:var(--rule)}svg .frame{stroke:var(--frame)}svg .diag,svg .target{stroke:var(--muted)}
svg .s0{stroke:var(--s0)}svg .s1{stroke:var(--s1)}svg .s2{stroke:var(--s2)}svg .s3{stroke:var(--s3)}svg .s4{stroke:var(--s4)}svg .s5{stroke:var(--s5)}
svg .dot.s0,svg .bar.s0{fill:var(--s0);stroke:none}svg .dot.s1,svg .bar.s1{fill:var(--s1);stroke:none}
svg .dot.s2,svg .bar.s2{fill:var(--s2);stroke:none}svg .dot.s3,svg .bar.s3{fill:var(--s3);stroke:none}
svg .dot.s4,svg .bar.s4{fill:var(--s4);stroke:none}svg .dot.s5,svg .bar.s5{fill:var(--s5);stroke:none}
svg .dot{fill-opacity:.85}
svg .cut{fill:none}
svg .cell{fill:var(--off)}svg .cell.diagc{fill:var(--diag)}
.bintabs{display:flex;flex-wrap:wrap;gap:4px 18px;align-items:flex-start}
table.bins{font-size:11.5px}table.bins td,table.bins th{padding:1px 6px}table.bins caption{text-align:left;font-size:12px;color:var(--muted);white-space:nowrap}
table.metrics td:first-child,table.deltas td:first-child{white-space:nowrap}
.flips{display:flex;flex-wrap:wrap;gap:8px 18px}
figure.flip{border:1px solid var(--rule);padding:4px 6px;border-radius:4px}
figure.flip figcaption{text-align:left;max-width:330px;overflow-wrap:anywhere}
.k-broken td:nth-child(2){color:var(--bad)}.k-fixed td:nth-child(2){color:var(--good)}
table.fliptab td{padding:1px 8px}td.ids{font-size:11px;overflow-wrap:anywhere;min-width:300px}
details.nums summary{cursor:default;color:var(--muted);font-size:12px}
footer{margin-top:32px;border-top:1px solid var(--rule);color:var(--muted);font-size:12px}
@media (max-width:640px){body{padding:10px}h1{font-size:19px}table{font-size:12px}}
@media print{:root{--bg:#fff;--fg:#000;--muted:#555;--rule:#ccc;--frame:#888;--panel:#f2f2f2;
--s0:#0072b2;--s1:#d55e00;--s2:#009e73;--s3:#cc79a7;--s4:#e69f00;--s5:#56b4e9;--good:#1a7f37;--bad:#c62828;--diag:#0072b2;--off:#d55e00}
body{max-width:none;padding:0;font-size:11px}nav{display:none}.scroll{overflow:visible}
h2{break-before:auto;break-after:avoid}h3{break-after:avoid}
th{background:none}.verdict{background:none}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}
`
