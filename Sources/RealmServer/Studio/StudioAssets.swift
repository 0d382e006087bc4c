import HTTPTypes
import Hummingbird

/// Studio's style sheet, and the headers of every page: a Content-Security-Policy that lets a
/// page load only Studio's own files (no inline script or style, no other site's), no caching,
/// no framing, no sniffing.
enum StudioAssets {
    static let headers: HTTPFields = [
        .contentType: "text/html; charset=utf-8",
        .contentSecurityPolicy:
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
            + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        .cacheControl: "no-store", .referrerPolicy: "no-referrer", .xContentTypeOptions: "nosniff",
    ]

    /// One of Studio's own files (its style sheet, its script).
    static func file(_ text: String, _ type: String) -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: "\(type); charset=utf-8", .cacheControl: "max-age=300", .xContentTypeOptions: "nosniff",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// A page with `data-live` follows its Realm's changes (``Studio/events(_:_:)``): at each, it
    /// fetches itself again and puts the new `main` in place, unless a field in it is being typed
    /// in (then when the field is left). `#live` says whether it is following.
    static let script = """
        "use strict";
        (function () {
          // A page a form's answer shows is at the form's address: the page's own takes its place, so
          // that a reload reads it (not the form again) and so does a live update.
          const page = document.body.dataset.page;
          if (page && page !== location.pathname.split("/").pop() + location.search) {
            history.replaceState(null, "", page);
          }
          const url = document.body.dataset.live;
          if (!url) return;
          const delay = Number(document.body.dataset.delay || 150);
          const badge = document.getElementById("live");
          let waiting = false, deferred = false;
          function typing() {
            const a = document.activeElement;
            return a && a.closest("main") && ["INPUT", "TEXTAREA", "SELECT"].includes(a.tagName);
          }
          async function refresh() {
            waiting = false;
            if (typing()) { deferred = true; return; }
            const answer = await fetch(location.href, { credentials: "same-origin", cache: "no-store" });
            if (answer.redirected) { location.href = answer.url; return; }
            const page = new DOMParser().parseFromString(await answer.text(), "text/html");
            const main = page.querySelector("main");
            if (!main) return;
            // What the last form's answer said stays until the person leaves the page.
            const said = ["notice", "error"].map(function (id) { return document.getElementById(id); });
            document.querySelector("main").replaceWith(document.adoptNode(main));
            const title = main.querySelector("h1");
            said.filter(Boolean).reverse().forEach(function (node) {
              if (title && !document.getElementById(node.id)) title.after(node);
            });
            document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed || 0) + 1);
          }
          document.addEventListener("focusout", function () {
            if (deferred) { deferred = false; setTimeout(refresh, 50); }
          });
          const source = new EventSource(url);
          function show(state) { if (badge) { badge.textContent = state; badge.className = state; } }
          source.addEventListener("open", function () { show("live"); });
          source.addEventListener("error", function () { show("offline"); });
          source.addEventListener("change", function () {
            if (!waiting) { waiting = true; setTimeout(refresh, delay); }
          });
        })();

        """

    static let stylesheet = """
        body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f7f8fa; }
        header { display: flex; align-items: center; gap: 1.5em; padding: .6em 1.5em; background: #39477f;
          color: #fff; }
        header a { color: #fff; text-decoration: none; }
        header .brand { font-weight: 600; font-size: 1.1em; }
        header .logout { margin-left: auto; display: flex; gap: .8em; align-items: center; }
        main { padding: 1em 1.5em 3em; max-width: 80em; }
        h1 { font-size: 1.4em; margin: .4em 0 .6em; word-break: break-all; }
        h2 { font-size: 1.1em; margin: 1.4em 0 .4em; }
        table { border-collapse: collapse; background: #fff; margin: .5em 0; }
        th, td { border: 1px solid #d6dae3; padding: .3em .6em; text-align: left; vertical-align: top; }
        th { background: #eef0f5; font-weight: 600; }
        td.value { max-width: 28em; overflow-wrap: anywhere; white-space: pre-wrap; }
        .null { color: #8a90a0; font-style: italic; }
        .notice { background: #e3f4e6; border: 1px solid #9ccfa6; padding: .5em .8em; }
        .error { background: #fbe6e6; border: 1px solid #e0a3a3; padding: .5em .8em; white-space: pre-wrap; }
        div.blocked { background: #fbe6e6; border: 1px solid #e0a3a3; padding: 0 .8em .8em; }
        header nav { display: flex; gap: 1em; }
        pre.caret { margin: .2em 0; color: #b02020; }
        form.inline { display: inline; }
        form.search, form.query { display: flex; gap: .5em; flex-wrap: wrap; align-items: center; margin: .5em 0; }
        input[type=search], input.query { min-width: 28em; }
        .pager { margin: .6em 0; display: flex; gap: 1em; }
        .crumbs { color: #5a6275; margin-top: .4em; }
        .muted { color: #5a6275; }
        #live.live { color: #b6f0c0; } #live.offline { color: #ffc9c9; }
        pre.instructions { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 12em;
          overflow: auto; }
        """
}

extension HTTPField.Name {
    static let xContentTypeOptions = Self("X-Content-Type-Options")!
}
