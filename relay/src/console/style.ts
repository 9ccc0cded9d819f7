/** The console's one stylesheet, served from the relay (no CDN, works offline). */
export const CONSOLE_CSS = `
:root { --fg:#1d2433; --muted:#5b6475; --bg:#f6f7f9; --card:#fff; --line:#dde1e8; --accent:#2457c5;
  --ok:#1f8a4c; --warn:#b7791f; --bad:#c53030; --info:#2b6cb0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--fg); font-size:15px; line-height:1.45; }
header { background:#1d2433; color:#fff; padding:.6rem 1rem; display:flex; flex-wrap:wrap; gap:.4rem 1.2rem; align-items:center; }
header .brand { font-weight:600; margin-right:auto; }
header nav { display:flex; flex-wrap:wrap; gap:.2rem .9rem; }
header a { color:#cfd8ea; text-decoration:none; padding:.2rem 0; }
header a[aria-current=page] { color:#fff; border-bottom:2px solid #fff; }
header form { margin:0; }
header button { background:transparent; color:#cfd8ea; border:1px solid #56607a; }
main { padding:1rem; max-width:1200px; margin:0 auto; }
h1 { font-size:1.35rem; margin:.2rem 0 1rem; }
h2 { font-size:1.1rem; margin:1.4rem 0 .6rem; }
a { color:var(--accent); }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:.8rem 1rem; margin-bottom:1rem; }
.grid { display:grid; grid-template-columns:repeat(auto-fit, minmax(260px, 1fr)); gap:1rem; }
.stats { display:grid; grid-template-columns:repeat(auto-fit, minmax(130px, 1fr)); gap:.6rem; }
.stat { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:.6rem .8rem; }
.stat b { display:block; font-size:1.4rem; }
.stat span { color:var(--muted); font-size:.85rem; }
.scroll { overflow-x:auto; -webkit-overflow-scrolling:touch; }
table { border-collapse:collapse; width:100%; background:var(--card); }
th, td { text-align:left; padding:.45rem .6rem; border-bottom:1px solid var(--line); vertical-align:top; }
th { font-size:.8rem; text-transform:uppercase; letter-spacing:.03em; color:var(--muted); white-space:nowrap; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
td.wrap { word-break:break-all; }
pre.response { margin:.2rem 0 0; max-height:8rem; overflow:auto; white-space:pre-wrap; word-break:break-all; font-size:.8em; background:rgba(127,127,127,.1); padding:.2rem .4rem; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size:.88em; }
.badge { display:inline-block; padding:.05rem .45rem; border-radius:999px; font-size:.8rem; font-weight:600; color:#fff; background:var(--muted); white-space:nowrap; }
.badge.delivered { background:var(--ok); } .badge.dead { background:var(--bad); }
.badge.pending, .badge.retry { background:var(--warn); } .badge.delivering { background:var(--info); }
.badge.catch-up { background:var(--info); }
.receipt { font-weight:600; }
ul.gaps { border-left:4px solid var(--warn); background:#fdf6e9; margin:0 0 1rem; padding:.6rem .8rem .6rem 2rem; }
table.facts th { width:11rem; white-space:normal; }
.muted { color:var(--muted); }
.notice { border-left:4px solid var(--ok); background:#eefaf2; padding:.6rem .8rem; margin-bottom:1rem; }
.error { border-left:4px solid var(--bad); background:#fdeeee; padding:.6rem .8rem; margin-bottom:1rem; }
form.filters { display:grid; grid-template-columns:repeat(auto-fit, minmax(150px, 1fr)); gap:.6rem; align-items:end; }
label { display:flex; flex-direction:column; gap:.2rem; font-size:.85rem; color:var(--muted); }
input, select, button { font:inherit; padding:.45rem .6rem; border:1px solid var(--line); border-radius:6px; background:#fff; color:var(--fg); min-height:2.4rem; }
button { cursor:pointer; background:var(--accent); color:#fff; border-color:var(--accent); }
button.danger { background:var(--bad); border-color:var(--bad); }
button.secondary { background:#fff; color:var(--accent); }
.inline { display:inline; margin:0; }
.actions { display:flex; flex-wrap:wrap; gap:.5rem; align-items:center; }
.pager { display:flex; justify-content:space-between; margin:.8rem 0; }
dl.fields { display:grid; grid-template-columns:minmax(110px, max-content) 1fr; gap:.3rem 1rem; margin:0; }
dl.fields dt { color:var(--muted); } dl.fields dd { margin:0; word-break:break-all; }
.chart > svg { width:100%; height:auto; display:block; }
.legend { display:flex; flex-wrap:wrap; gap:.3rem .9rem; font-size:.82rem; color:var(--muted); margin-top:.3rem; }
.chart { margin:0; }
.chart .grid { stroke:var(--line); stroke-width:1; }
.chart .axis { fill:var(--muted); font-size:15px; }
.legend .mark { display:inline-block; width:.7rem; height:.7rem; margin-right:.15rem; vertical-align:-.05rem; }
rect.c-received { fill:var(--accent); }
rect.c-delivered { fill:var(--ok); }
rect.c-retrying { fill:var(--warn); }
rect.c-dead { fill:var(--bad); }
.login { max-width:380px; margin:12vh auto; }
.login form { display:flex; flex-direction:column; gap:.8rem; }
@media (max-width: 600px) {
  main { padding:.6rem; }
  th, td { padding:.4rem .45rem; }
  /* Tables become one card per row, each value after its column name. */
  table.cards thead { display:none; }
  table.cards, table.cards tbody, table.cards tr { display:block; }
  table.cards tr { border-bottom:1px solid var(--line); padding:.35rem 0; }
  table.cards td { display:block; position:relative; border:none; padding:.15rem .6rem .15rem 7.6rem; min-height:1.6rem; text-align:left; }
  table.cards td::before { content:attr(data-label); position:absolute; left:.6rem; width:6.6rem; color:var(--muted); font-size:.8rem; padding-top:.1rem; }
  table.cards td:empty { display:none; }
}
`;
