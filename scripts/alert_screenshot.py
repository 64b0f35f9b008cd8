"""screenshots/prometheus-alerts.png: Prometheus' alert page with queuetop's rules firing, from a real run.

The end-to-end test's stack (tests/test_prometheus_e2e.py): a private PostgreSQL cluster, `queuetop serve` on
it, Debian's Prometheus scraping it every second with the rules of `queuetop alerts`; `queuetop load` builds a
backlog until the depth SLO's alert and QueuetopBackingUp fire, and headless Chromium (Debian's
chromium-headless-shell, installed here if missing) takes the picture of Prometheus' alert page — Debian builds
the classic UI only (no React app: /alerts is 404) — with the firing rules opened and their annotations shown,
as a click on each would (one style rule added to the page Prometheus served). About 15 s.

    .venv/bin/python scripts/alert_screenshot.py
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.test_prometheus_e2e import backlog, firing, prometheus_over_serve, wait_until  # noqa: E402

OUT = ROOT / "screenshots" / "prometheus-alerts.png"
BROWSER = "chromium-headless-shell"
FIRING = {("QueuetopQueueTooDeep", "email"), ("QueuetopBackingUp", "email")}


def browser() -> str:
    found = shutil.which(BROWSER)
    if found is None:
        print(f"[alert_screenshot] installing {BROWSER} (Debian)", file=sys.stderr)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", BROWSER], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        found = shutil.which(BROWSER)
    assert found, f"{BROWSER} is not installed"
    return found


def get_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def opened(html: str, base: str) -> str:
    """The page with its firing rules' details and every annotation shown; its assets still from Prometheus."""
    style = ("<style>tr.alert-danger + tr.alert_details { display: table-row !important; } "
             "tr.alert_annotations { display: table-row !important; }</style>")  # fmt: skip
    return html.replace("<head>", f'<head><base href="{base}/">', 1).replace("</head>", style + "</head>", 1)


def main() -> int:
    chromium = browser()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        with prometheus_over_serve(tmp, "--max-depth", "50", "--for", "2s", "--backing-up-for", "3s") as (server, base):
            load = backlog(server, tmp / "load.log")
            try:
                wait_until(lambda: firing(base) >= FIRING, "the depth and backing-up alerts to fire", timeout_s=60)
                page = tmp / "alerts.html"
                page.write_text(opened(get_text(f"{base}/classic/alerts"), base))
                subprocess.run([chromium, "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                "--window-size=1400,1000", "--virtual-time-budget=5000", f"--screenshot={OUT}",
                                page.as_uri()], check=True, capture_output=True, timeout=60)  # fmt: skip
            finally:
                load.send_signal(signal.SIGINT)
                load.wait(timeout=30)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
