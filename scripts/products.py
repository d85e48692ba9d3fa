#!/usr/bin/env python3
"""The products, found as Package.swift finds them: every folder under Apps/ with an Onboarding/
folder is a product; its executable is the folder's name in lower case. Every script that works on
"each product" lists them from here, so a new product folder is picked up with no edit.

    python3 scripts/products.py            prints FOLDER EXECUTABLE PAGE, one product a line
    python3 scripts/products.py --refresh  makes SwiftPM read Package.swift again (refresh_package_graph)

A product's page is Docs/<Folder>.md once the team has written one there, else the README.md of its
folder (what scripts/new-product writes)."""
import os

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


class Product:
    def __init__(self, folder):
        self.folder = folder
        self.executable = folder.lower()
        self.path = os.path.join(ROOT, "Apps", folder)
        self.transcripts = os.path.join(self.path, "Transcripts")
        self.sample_session = os.path.join(self.path, "sample-session.txt")
        self.binary = os.path.join(ROOT, ".build", "debug", self.executable)

    @property
    def page(self):
        docs = os.path.join(ROOT, "Docs", self.folder + ".md")
        return docs if os.path.exists(docs) else os.path.join(self.path, "README.md")

    def __repr__(self):
        return f"{self.folder} ({self.executable})"


def products(names=()):
    """Every product, in folder order; with names (folders or executables), those only. An unknown
    name raises SystemExit with the names there are."""
    apps = os.path.join(ROOT, "Apps")
    found = [Product(f) for f in sorted(os.listdir(apps)) if os.path.isdir(os.path.join(apps, f, "Onboarding"))]
    if not names:
        return found
    chosen = []
    for name in names:
        match = [p for p in found if name in (p.folder, p.executable)]
        if not match:
            raise SystemExit(f"no product '{name}'; the products are: {', '.join(p.folder for p in found)}")
        chosen += match
    return chosen


def refresh_package_graph():
    """Makes SwiftPM see a product folder made since it last read Package.swift. It keeps what the
    manifest evaluated to, keyed by the manifest's text, and the build plan made from that; the
    products are the folders under Apps/, which the text does not show. Both are caches: removed,
    the next build reads Package.swift again and plans anew (nothing is recompiled for it)."""
    home = os.path.expanduser("~")
    for cache in [os.path.join(home, ".cache", "org.swift.swiftpm", "manifests"),
                  os.path.join(home, "Library", "Caches", "org.swift.swiftpm", "manifests")]:
        for suffix in ("", "-shm", "-wal"):
            path = os.path.join(cache, "manifest.db" + suffix)
            if os.path.exists(path):
                os.remove(path)
    for plan in ("debug.yaml", "release.yaml"):
        path = os.path.join(ROOT, ".build", plan)
        if os.path.exists(path):
            os.remove(path)


if __name__ == "__main__":
    import sys
    if sys.argv[1:] == ["--refresh"]:
        refresh_package_graph()
        sys.exit(0)
    for p in products():
        print(p.folder, p.executable, os.path.relpath(p.page, ROOT))
