"""The web app for `app_link()`: a hosted copy named by `HASSEFLOW_APP_URL`, else the release
bundle shipped in the wheel (python/hasseflow/app/, copied there from scripts/release.sh's
output by scripts/bundle_app.sh before `pip install ./python`), served on a local port by the
standard library's http.server in a daemon thread. No Rust toolchain is needed to open a link."""

import functools
import http.server
import os
import threading

from ._native import HasseflowError

ENV_URL = "HASSEFLOW_APP_URL"
ENV_DIR = "HASSEFLOW_APP_DIR"
_PACKAGE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "app")
# A source checkout run with PYTHONPATH=python (or `maturin develop`): the bundle release.sh built.
_CHECKOUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "dist-release")

class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        """A browser that drops a connection (a closed tab, a cancelled preload) is no error."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


_lock = threading.Lock()
_servers = {}


def bundle_dir():
    """The folder of the app's release bundle: $HASSEFLOW_APP_DIR, the package's app/ folder, or a
    source checkout's dist-release/; None when there is none."""
    for d in (os.environ.get(ENV_DIR), _PACKAGE_DIR, _CHECKOUT_DIR):
        if d and os.path.isfile(os.path.join(d, "index.html")):
            return os.path.abspath(d)
    return None


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm",
                      ".js": "text/javascript", ".css": "text/css", ".html": "text/html; charset=utf-8"}

    def log_message(self, *args):  # quiet: a notebook is no server log
        pass


def app(port=0):
    """The URL of the web app: $HASSEFLOW_APP_URL when set (a hosted copy), else the bundled app
    served on 127.0.0.1 (`port`, or a free one) by a background thread of this process, started
    once and reused. Raises HasseflowError when this install has no bundle."""
    hosted = os.environ.get(ENV_URL)
    if hosted:
        return hosted if hosted.endswith("/") else hosted + "/"
    folder = bundle_dir()
    if folder is None:
        raise HasseflowError(
            "the web app's release bundle is not in this install (python/hasseflow/app/ is empty: the package was "
            "built without it). Set HASSEFLOW_APP_URL to a hosted copy, or build it: scripts/release.sh --dist "
            "dist-release && scripts/bundle_app.sh, then reinstall (pip install ./python)")
    with _lock:
        key = (folder, int(port))
        server = _servers.get(key) or (_servers.get((folder, 0)) if not port else None)
        if server is None:
            handler = functools.partial(_Handler, directory=folder)
            server = _Server(("127.0.0.1", int(port)), handler)
            threading.Thread(target=server.serve_forever, name="hasseflow-app", daemon=True).start()
            _servers[key] = server
        return f"http://127.0.0.1:{server.server_address[1]}/"


# The dev server of a source checkout (./scripts/serve.sh): where links point without a bundle.
DEV_URL = "http://127.0.0.1:8080/"
_warned = []


def base_url(base=None):
    """The app's URL for a link: `base` when given, else `app()`; without a bundle or
    $HASSEFLOW_APP_URL, the dev server's URL, with a warning (once) saying how to get one."""
    if base is not None:
        return base
    try:
        return app()
    except HasseflowError as e:
        if not _warned:
            import warnings

            warnings.warn(f"{e}. The link points at ./scripts/serve.sh's dev server ({DEV_URL}).", stacklevel=3)
            _warned.append(True)
        return DEV_URL
