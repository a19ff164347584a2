"""The HTML/SVG/CSV report renders for every example, parses, and fetches nothing from anywhere."""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from clusterforge.cli.report import register
from clusterforge.loading import load_and_plan
from clusterforge.render.report import fabric_svg, render_report
from clusterforge.render.report.fabric_svg import fabric_view
from clusterforge.render.report.ipplan import ip_plan_view

ROOT = Path(__file__).parents[2]
EXAMPLES = ("lab", "roce-128gpu", "superpod-4su")
SVG_NS = "http://www.w3.org/2000/svg"
URL = re.compile(r"\b(?:https?:)?//[\w.-]+\.[a-z]{2,}[^\s\"'<>)]*", re.IGNORECASE)


def _load(name: str):
    spec, plan, _ = load_and_plan(ROOT / "inventory" / f"{name}.yaml")
    return spec, plan


PLANS = {name: _load(name) for name in EXAMPLES}
REPORTS = {name: render_report(PLANS[name][1]) for name in EXAMPLES}
SVGS = [(name, path) for name in EXAMPLES for path in REPORTS[name] if path.endswith(".svg")]


@pytest.mark.parametrize("name", EXAMPLES)
def test_report_has_index_bom_and_one_svg_per_rack_and_plane(name: str):
    _, plan = PLANS[name]
    expected = {"report/index.html", "report/bom.csv"}
    expected |= {f"report/racks/{rack.name}.svg" for rack in plan.racks}
    expected |= {f"report/fabric-{plane}.svg" for plane in plan.fabric}
    assert set(REPORTS[name]) == expected


@pytest.mark.parametrize(("name", "path"), SVGS)
def test_svg_file_parses_as_xml(name: str, path: str):
    root = ET.fromstring(REPORTS[name][path])
    assert root.tag == f"{{{SVG_NS}}}svg"


@pytest.mark.parametrize("name", EXAMPLES)
def test_inline_svgs_in_the_page_parse_as_xml(name: str):
    html = REPORTS[name]["report/index.html"]
    blocks = re.findall(r"<svg\b.*?</svg>", html, flags=re.DOTALL)
    _, plan = PLANS[name]
    assert len(blocks) >= len(plan.fabric) + 1
    for block in blocks:
        ET.fromstring(block)


@pytest.mark.parametrize("name", EXAMPLES)
def test_page_has_no_external_url(name: str):
    html = REPORTS[name]["report/index.html"]
    urls = [url for url in URL.findall(html) if url != "http://www.w3.org/2000/svg"]
    assert urls == []


@pytest.mark.parametrize("name", EXAMPLES)
def test_page_loads_no_script_font_or_stylesheet(name: str):
    html = REPORTS[name]["report/index.html"].lower()
    for needle in ("<script", "<link", "@import", "url(", "<img", "<iframe"):
        assert needle not in html, needle


@pytest.mark.parametrize(("name", "path"), SVGS)
def test_svg_file_has_no_external_url(name: str, path: str):
    assert [u for u in URL.findall(REPORTS[name][path]) if u != "http://www.w3.org/2000/svg"] == []


def test_rack_elevation_names_every_device_and_model_in_the_rack():
    _, plan = PLANS["lab"]
    for device in plan.devices:
        svg = REPORTS["lab"][f"report/racks/{device.rack}.svg"]
        assert f">{device.name}<" in svg
        assert device.model in svg


def test_rack_elevation_shows_budget_line_feeds_cooling_and_weight():
    svg = REPORTS["superpod-4su"]["report/racks/su01-r01.svg"]
    for text in (">budget<", "su01-r01-pdu-a", "su01-r01-pdu-b", "liquid-cooled", " kg of "):
        assert text in svg


def test_large_fabric_is_drawn_as_groups_not_a_hairball():
    _, plan = PLANS["superpod-4su"]
    svg = REPORTS["superpod-4su"]["report/fabric-data.svg"]
    data_links = sum(1 for link in plan.links if link.plane == "data")
    assert data_links > 2000
    assert svg.count("<line") < 60
    assert svg.count("<text") < 250
    assert "su01-r04-gpu02" not in svg


def test_fabric_folds_sus_beyond_the_column_limit(monkeypatch):
    monkeypatch.setattr(fabric_svg, "MAX_SU_COLUMNS", 3)
    _, plan = PLANS["superpod-4su"]
    view = fabric_view(plan, "data")
    titles = [box["title"] for box in view["boxes"]]
    assert any(title.startswith("2 more SUs") for title in titles)
    assert view["folded"] == 2


def test_fabric_header_shows_achieved_and_declared_oversubscription():
    svg = REPORTS["roce-128gpu"]["report/fabric-storage.svg"]
    # 16 x 200G node ports under 8 x 400G uplinks: bandwidth 1:1, better than the declared 2:1
    assert "achieved oversubscription leaf 1:1 (declared 2:1)" in svg


@pytest.mark.parametrize("name", EXAMPLES)
def test_ip_plan_per_su_counts_add_up_to_pool_usage(name: str):
    view = ip_plan_view(PLANS[name][1])
    for index, pool in enumerate(view["pools"]):
        counted = sum(row["cells"][index]["count"] for row in view["rows"] if row["cells"][index])
        assert counted == pool["used"]
        assert pool["used"] <= pool["size"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_bom_csv_lines_match_the_plan(name: str):
    _, plan = PLANS[name]
    rows = list(csv.DictReader(io.StringIO(REPORTS[name]["report/bom.csv"])))
    assert len(rows) == len(plan.bom.lines)
    assert sum(float(row["total"]) for row in rows) == pytest.approx(plan.bom.hardware_total)


def test_report_is_deterministic():
    assert render_report(PLANS["lab"][1]) == REPORTS["lab"]


def test_cli_report_writes_the_tree(tmp_path: Path):
    app = typer.Typer()
    register(app)
    result = CliRunner().invoke(app, ["report", str(ROOT / "inventory" / "lab.yaml"), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "report" / "index.html").is_file()
    assert (tmp_path / "report" / "racks" / "su01-r01.svg").is_file()


def test_cli_report_prints_declaration_problems_and_exits_1(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: Not-Valid\n")
    app = typer.Typer()
    register(app)
    result = CliRunner().invoke(app, ["report", str(bad), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert f"{bad}:" in result.output


def test_lossless_planes_show_the_classes_and_each_nos_declared_choices():
    html = REPORTS["lab"]["report/index.html"]
    assert "<h3>Lossless RoCE</h3>" in html
    assert '<td class="mono">24-31</td><td>DWRR 50 %</td><td>no-drop</td>' in html  # the RoCE class
    assert '<td class="mono">48</td><td>strict</td>' in html  # only the CNP DSCP in the strict class
    assert "no DCBX and no RoCE application TLV: a NOS limit" in html  # the lab's data plane is SONiC
    from clusterforge.render.report.qos import _ranges

    assert _ranges([0, 1, 2, 5, 7, 8]) == "0-2, 5, 7-8" and _ranges([]) == ""


def test_the_report_shows_no_lossless_table_without_a_roce_plane():
    _, plan = PLANS["superpod-4su"]  # InfiniBand compute, lossy storage
    assert not any(p.lossless for p in plan.planes.values())
    assert "Lossless RoCE" not in REPORTS["superpod-4su"]["report/index.html"]
