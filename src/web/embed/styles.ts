/**
 * The embedded form's styles, adopted by its shadow root as a constructed stylesheet (no <style>
 * element, no style attribute: nothing a host page's CSP could block). `:host` resets what
 * inherits from the host page (fonts, colours, line height), so the form looks the same anywhere;
 * its declarations are !important, which is how a shadow root's styles win over the host page's
 * own !important rules on the host element (an outer normal rule would win over an inner one).
 */
export const EMBED_CSS = `
:host{all:initial!important;display:block!important;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif!important;font-size:16px!important;line-height:1.5!important;color:#e2e8f0!important}
*{box-sizing:border-box}
.embed{background:#0b1120;border:1px solid #334155;border-radius:12px;padding:20px;max-width:560px}
.title{margin:0;font-size:1.25rem;font-weight:700;color:#fff}
.headline{margin:4px 0 16px;color:#cbd5e1}
.row{display:flex;flex-wrap:wrap;gap:8px}
input[type=email]{flex:1 1 220px;min-width:0;padding:10px 12px;border-radius:8px;border:1px solid #475569;background:#0f172a;color:#fff;font:inherit}
input::placeholder{color:#94a3b8}
.submit{padding:10px 18px;border:0;border-radius:8px;background:#38bdf8;color:#0b1120;font:inherit;font-weight:700;cursor:pointer}
.submit:disabled,input:disabled{opacity:.6;cursor:not-allowed}
input:focus-visible,.submit:focus-visible,a:focus-visible,.thanks:focus-visible{outline:3px solid #fbbf24;outline-offset:2px}
.consent{display:flex;gap:8px;align-items:flex-start;margin-top:10px;font-size:.875rem}
.status{min-height:1.5em;margin:8px 0 0;font-size:.875rem}
.status.error{color:#fca5a5}
.helper{margin:8px 0 0;color:#cbd5e1;font-size:.875rem}
.thanks-title{font-size:1.125rem;font-weight:700;margin:0;color:#fff}
.thanks p{margin:4px 0}
.legends{margin-top:16px;border-top:1px solid #334155;padding-top:12px;font-size:.75rem;color:#94a3b8}
.legends p{margin:0 0 6px}
a{color:#7dd3fc}
.sr-only,.hp{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
`;
