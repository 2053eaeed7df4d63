"""wsel.map: the placement, drawn inline in Jupyter."""

import wsel


def test_map_renders_as_svg(digits):
    placement = wsel.map(digits["program"], batch=8)
    svg = placement._repr_svg_()
    assert svg.lstrip().startswith("<svg") and svg.rstrip().endswith("</svg>")
    names = [layer["name"] for layer in placement.layers]
    # every layer apart: estimated faster than fused here (docs/mapping.md §4, "Fusion")
    assert names == ["dense#1", "relu#1", "dense#2", "relu#2", "dense#3", "softmax#1"]
    for name in names:
        assert name in svg
    assert "dense#1" in str(placement)


def test_map_on_another_target(digits):
    placement = wsel.map(digits["program"], batch=8, target="wse2", copies=1)
    assert placement.data["target"] == "wse2"
    assert (placement.data["fabric_width"], placement.data["fabric_height"]) == (750, 994)
    assert placement.data["copies"] == 1 and len(placement.layers) == 6  # apart, as on dev
    assert placement.table.startswith("digits on wse2")
