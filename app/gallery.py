"""The preset gallery's catalogue (issue 17), Qt-free: a card for every scenario of every model
(the paper it comes from, what to look for) and presets beyond the papers where they teach
something. Each card's thumbnail is generated, not drawn by hand:

    python -m pdestudio.app.gallery --build          # every thumbnail into resources/gallery/
    python -m pdestudio.app.gallery --build ID ...   # some of them

runs the preset briefly on NumPy at a small size and draws its default field with the sweep's
thumbnail code (app/sweep/thumbs.py). tests/app/test_gallery.py checks that every model and
scenario has a card and every card its thumbnail."""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

RESOURCES = Path(__file__).resolve().parent.parent / "resources"
THUMBS = RESOURCES / "gallery"
MESHES = RESOURCES / "meshes"
MODELS = RESOURCES / "models"

PAPERS = {
    "000": "T. Oberhuber, A. Suzuki, V. Žabka: The CUDA implementation of the method of lines "
           "for the curvature dependent flows. Kybernetika 47(2), 251–272 (2011)",
    "001": "S. M. Descombes, D. S. Dhillon, M. Zwicker: Optimized CUDA-based PDE solver for "
           "reaction diffusion systems on arbitrary surfaces (PPAM 2015)",
    "002": "M. J. Castro, S. Ortega, M. de la Asunción, J. M. Mantas, J. M. Gallardo: GPU "
           "computing for shallow water flows simulation based on finite volume schemes. "
           "C. R. Mécanique 339, 165–184 (2011)",
    "003": "D. J. Magee, K. E. Niemeyer: Accelerating solutions of one-dimensional unsteady PDEs "
           "with GPU-based swept time–space decomposition. J. Comput. Phys. 357, 338–352 (2018)",
    "004": "M. de la Asunción, J. M. Mantas, M. J. Castro et al.: the impact of cell renumbering "
           "on GPU finite-volume two-layer shallow water solvers on triangle meshes",
    "pearson": "J. E. Pearson: Complex patterns in a simple system. Science 261, 189–192 (1993)",
}


@dataclass(frozen=True)
class Preset:
    id: str
    title: str
    model: str
    scenario: str
    summary: str          # one line
    paper: str            # a key of PAPERS
    look_for: str
    params: dict = field(default_factory=dict)     # what the window opens with
    init: tuple = ()                               # (field, source) applied after opening
    thumb_params: dict = field(default_factory=dict)  # a small size for the thumbnail
    thumb_until: float | None = None
    thumb_steps: int | None = None
    thumb_field: str | None = None                 # default: the model's default field
    compare: dict | None = None                    # opens View > Compare with these changes
    file: Path | None = None                       # a model file (resources/models/)
    cite: str = ""                                 # the model file's citation

    @property
    def citation(self) -> str:
        return self.cite or PAPERS[self.paper]

    @property
    def thumbnail(self) -> Path:
        return THUMBS / f"{self.id}.png"


SNAKE = str(MESHES / "snake.ply")
PRESETS: tuple[Preset, ...] = (
    Preset("mc-sine-rings", "Mean-curvature flow", "mean-curvature", "sine-rings",
           "A graph with sine rings flattens by its mean curvature.", "000",
           "Rings shrink and vanish, the fastest the most curved; the step size grows as the "
           "surface smooths out.", thumb_params={"nx": 48}, thumb_until=0.002),
    Preset("mc-eoc", "Mean curvature: exact solution", "mean-curvature", "eoc-exact",
           "The manufactured exact solution of the paper's convergence tables.", "000",
           "The 'error' of the quantities dock stays at the scheme's accuracy; refine nx and "
           "watch it fall at second order.", thumb_params={"nx": 32}, thumb_until=0.05),
    Preset("wm-sine-rings", "Willmore flow", "willmore", "sine-rings",
           "The same rings under the fourth-order Willmore flow.", "000",
           "Compared with mean curvature, bending energy decays: the rings spread before they "
           "fade, and the steps are far smaller (fourth order).", thumb_params={"nx": 32},
           thumb_steps=200),
    Preset("wm-eoc", "Willmore: exact solution", "willmore", "eoc-exact",
           "The Willmore flow's manufactured exact solution.", "000",
           "The error against the exact solution in the quantities dock.",
           thumb_params={"nx": 32}, thumb_steps=100),
    Preset("mc-vs-willmore", "Mean curvature vs Willmore", "mean-curvature", "sine-rings",
           "The same rings under both flows, side by side, with their difference.", "000",
           "Mean curvature (second order) flattens the rings fast; Willmore (fourth order) "
           "first redistributes them; the A − B view shows where the flows part.",
           params={"nx": 32}, compare={"model": "willmore"}, thumb_params={"nx": 48},
           thumb_until=0.002),
    Preset("cx-rectangle", "Chemotaxis on a rectangle", "chemotaxis", "rectangle",
           "Cells drift up the chemoattractant they produce: snakeskin patterns.", "001",
           "Spots of cells appear where the random perturbation grows (α above the Turing "
           "threshold 12.02); raise s for smaller spots.", thumb_params={"vertices": 3000},
           thumb_until=40.0),
    Preset("cx-tube", "Chemotaxis on a tube", "chemotaxis", "tube",
           "The same model on a snake-like tube.", "001",
           "Bands and spots wrap around the tube, as on a snake's skin.",
           thumb_params={"vertices": 4000}, thumb_until=40.0),
    Preset("cx-snake", "Chemotaxis on a snake mesh", "chemotaxis", "file",
           "A pigmentation pattern on a scanned snake surface.", "001",
           "The positive scheme keeps the cell density ≥ 0 on this irregular mesh.",
           params={"mesh": SNAKE}, thumb_params={"mesh": SNAKE}, thumb_until=20.0),
    Preset("gs-rectangle", "Gray–Scott on a rectangle", "gray-scott", "rectangle",
           "Seeded spots of v grow and split.", "001",
           "Spots divide and fill the domain (F = 0.037, k = 0.06).",
           thumb_params={"vertices": 3000}, thumb_until=600.0),
    Preset("gs-tube", "Gray–Scott on a tube", "gray-scott", "tube",
           "Gray–Scott patterns around a tube.", "001",
           "The pattern continues across the seam of the tube.",
           thumb_params={"vertices": 4000}, thumb_until=600.0),
    Preset("gs-icosphere", "Gray–Scott on a sphere", "gray-scott", "file",
           "Any surface mesh file; here a unit sphere of 2,562 vertices seeded at two caps.",
           "001", "Spots multiply from the two caps until they cover the closed surface (Du, Dv "
           "scaled down to the unit sphere).",
           params={"mesh": str(MESHES / "sphere2562.ply"), "Du": 0.0006, "Dv": 0.0003,
                   "F": 0.03, "k": 0.062, "spots": 0},
           init=(("u", "formula:where(max(z, x) > 0.9, 0.5, 1)"),
                 ("v", "formula:where(max(z, x) > 0.9, 0.25, 0)")),
           thumb_params={"mesh": str(MESHES / "sphere2562.ply"), "Du": 0.0006, "Dv": 0.0003,
                         "F": 0.03, "k": 0.062, "spots": 0}, thumb_until=4000.0),
    Preset("gs-spots", "Gray–Scott: spots", "gray-scott", "rectangle",
           "Pearson's spot regime: isolated self-replicating spots.", "pearson",
           "Spots keep their size and multiply without joining.",
           params={"F": 0.025, "k": 0.06}, thumb_params={"vertices": 3000, "F": 0.025,
                                                         "k": 0.06}, thumb_until=1000.0),
    Preset("gs-worms", "Gray–Scott: worms", "gray-scott", "rectangle",
           "Pearson's worm regime: spots stretch into worms.", "pearson",
           "Spots elongate into worms that grow at their ends.",
           params={"F": 0.03, "k": 0.057}, thumb_params={"vertices": 3000, "F": 0.03,
                                                         "k": 0.057}, thumb_until=1000.0),
    Preset("gs-maze", "Gray–Scott: labyrinth", "gray-scott", "rectangle",
           "Pearson's labyrinth regime: stripes fill the domain.", "pearson",
           "Stripes join into a maze that fills the rectangle.",
           params={"F": 0.03, "k": 0.055}, thumb_params={"vertices": 3000, "F": 0.03,
                                                         "k": 0.055}, thumb_until=1000.0),
    Preset("sw-circular", "Circular dam break", "shallow-water", "circular-dambreak",
           "A cylinder of water collapses over a bump (the paper's Table 1).", "002",
           "A circular bore runs outwards, a depression inwards; volume stays constant while "
           "energy is lost at the bore.", thumb_params={"nx": 64}, thumb_until=0.4),
    Preset("sw-bump", "Dam break on triangles", "shallow-water", "bump-dambreak",
           "The dam break over a bump on an unstructured triangle mesh.", "002",
           "The bore stays circular on triangles; switch the scheme (Roe, IR-Roe, PVM-IFCP).",
           thumb_params={"cells": 4000}, thumb_until=0.4),
    Preset("sw-lake", "Lake at rest", "shallow-water", "lake-at-rest",
           "Still water over a bumpy bottom stays still.", "002",
           "Nothing moves: the scheme is well balanced (velocities at round-off).",
           thumb_params={"nx": 48}, thumb_steps=20, thumb_field="bottom"),
    Preset("sw-tsunami", "A wave over a ridge", "shallow-water", "lake-at-rest",
           "A long wave meets a submarine ridge (beyond the papers).", "002",
           "The wave slows and steepens over the shallow ridge and partly reflects; a "
           "tsunami's height grows the same way near the coast.",
           params={"nx": 160, "Lx": 20.0, "Ly": 10.0},
           init=(("H", "formula:2 - 1.6*exp(-2*(x - 3)**2)"),
                 ("h", "formula:2 - 1.6*exp(-2*(x - 3)**2) + 0.3*exp(-2*(x + 5)**2)")),
           thumb_params={"nx": 80, "Lx": 20.0, "Ly": 10.0}, thumb_until=2.5),
    Preset("tl-internal", "Internal dam break", "two-layer", "internal-dambreak",
           "Two layers of nearly equal density exchange (r = 0.998).", "004",
           "The interface moves slowly: internal waves are √(1 − r) slower than surface ones.",
           thumb_params={"cells": 3000}, thumb_steps=40),
    Preset("tl-test1", "Renumbering test 1", "two-layer", "renumbering-test-1",
           "The paper's first test problem (r = 0.5).", "004",
           "Compare cell orderings (renumber = rcm, gps, none) in the profiler.",
           thumb_params={"cells": 3000}, thumb_steps=40),
    Preset("tl-test2", "Renumbering test 2", "two-layer", "renumbering-test-2",
           "The paper's second test problem (r = 0.98).", "004",
           "The same, with layers of close densities.", thumb_params={"cells": 3000},
           thumb_steps=40),
    Preset("heat-rod", "Heat in a rod", "heat-1d", "insulated-rod",
           "A cosine mode decays in an insulated rod.", "003",
           "The amplitude decays as exp(−α(kπ/L)² t); the heat stays constant.",
           thumb_params={"nx": 128}, thumb_until=0.02),
    Preset("ks-chaos", "Kuramoto–Sivashinsky chaos", "ks-1d", "periodic-chaos",
           "Spatio-temporal chaos of the KS equation.", "003",
           "Cells split and merge irregularly; the space–time view shows the chaos.",
           thumb_params={"nx": 256}, thumb_until=20.0),
    Preset("euler-sod", "Sod's shock tube", "euler-1d", "sod",
           "The classic Riemann problem of gas dynamics.", "003",
           "A rarefaction, a contact and a shock: compare scheme = paper with muscl-hllc.",
           thumb_params={"nx": 200}, thumb_until=0.2),
    Preset("euler-wave", "Entropy wave", "euler-1d", "entropy-wave",
           "A density wave carried by uniform flow (periodic).", "003",
           "The wave travels unchanged in shape, up to the scheme's diffusion.",
           thumb_params={"nx": 200}, thumb_until=0.5),
)


# simulated time of each gallery file's thumbnail run (NumPy, the file's default size)
MODEL_THUMB_UNTIL = {
    "allen-cahn-torus": 20.0, "barkley": 30.0, "brusselator": 40.0, "chemotaxis-snake": 40.0,
    "cross-diffusion": 20.0, "fisher-kpp-snake": 8.0, "fitzhugh-nagumo": 300.0,
    "gierer-meinhardt-sphere": 60.0, "gray-scott-pearson": 3000.0, "keller-segel": 60.0,
    "lengyel-epstein-torus": 40.0, "schnakenberg": 60.0,
}


def model_file_cards(folder: Path = MODELS) -> tuple[Preset, ...]:
    """A card per model file of `folder`, from its [model] table."""
    import tomllib
    cards = []
    for path in sorted(folder.glob("*.toml")):
        m = tomllib.loads(path.read_text(encoding="utf-8")).get("model", {})
        title, _, summary = m.get("description", m["name"]).partition(": ")
        cards.append(Preset(f"mf-{path.stem}", title, m["name"], "default",
                            (summary[:1].upper() + summary[1:] + ".") if summary else title,
                            "", m.get("look_for", ""), file=path, cite=m.get("citation", ""),
                            thumb_until=MODEL_THUMB_UNTIL.get(path.stem, 10.0)))
    return tuple(cards)


PRESETS = PRESETS + model_file_cards()


def by_id(pid: str) -> Preset:
    for p in PRESETS:
        if p.id == pid:
            return p
    raise KeyError(f"unknown preset '{pid}'; presets: " + ", ".join(p.id for p in PRESETS))


def render(p: Preset):
    """Run the preset briefly on NumPy and draw its thumbnail (a PIL image)."""
    import numpy as np

    from pdestudio import solvers

    from .initial_conditions import load_values
    from .sweep.thumbs import thumbnail
    model = solvers.define(p.file) if p.file else p.model
    sim = solvers.create(model, backend="numpy", scenario=p.scenario,
                         **{**p.params, **p.thumb_params})
    for name, source in p.init:
        sim.set_field(name, load_values(sim, name, source))
    with np.errstate(all="ignore"):
        if p.thumb_until is not None:
            sim.advance(p.thumb_until)
        else:
            sim.step(p.thumb_steps or 1)
    f = p.thumb_field or sim.default_field or next(iter(sim.field_infos))
    return thumbnail(sim.mesh, sim.fields()[f], size=128)


def build(ids=None, out: Path = THUMBS) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    done = []
    for p in PRESETS:
        if ids and p.id not in ids:
            continue
        path = out / f"{p.id}.png"
        render(p).save(path, optimize=True)
        done.append(path)
        print(f"{path}", flush=True)
    return done


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Generate the gallery's thumbnails.")
    ap.add_argument("--build", nargs="*", metavar="ID", help="presets to draw (default: all)")
    ap.add_argument("--out", type=Path, default=THUMBS)
    a = ap.parse_args(argv)
    if a.build is None:
        print("\n".join(f"{p.id:16s} {p.model}/{p.scenario}: {p.title}" for p in PRESETS))
        return 0
    build(a.build or None, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
