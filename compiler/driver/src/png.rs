//! Pictures as PNG, for viewers that show no SVG (`wsel map --svg map.png`, `wsel run
//! --heatmap h.png`): the SVG is rendered by resvg with DejaVu Sans bundled
//! (`compiler/driver/fonts/`, its licence beside it), so a picture renders the same on every
//! machine, installed fonts or not. The same parse gives the rendered texts and their boxes,
//! which the tests use to check that a picture is legible: no two labels overlap, every label
//! lies on the canvas.

use std::path::Path;

use resvg::{tiny_skia, usvg};

const SANS: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");
const SANS_BOLD: &[u8] = include_bytes!("../fonts/DejaVuSans-Bold.ttf");

/// One rendered text: what it says and its box on the canvas, `[x0, y0, x1, y1]` in pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    pub text: String,
    pub bounds: [f32; 4],
}

/// Whether `path` asks for a PNG (by its extension, in any case).
pub fn wants_png(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"))
}

/// The bytes to write for picture `svg` at `path`: a PNG when the path asks for one, else
/// the SVG text.
pub fn picture(path: &Path, svg: String) -> Result<Vec<u8>, String> {
    if wants_png(path) {
        to_png(&svg).map_err(|e| format!("cannot draw the PNG: {e}"))
    } else {
        Ok(svg.into_bytes())
    }
}

/// `svg` as the bytes of a PNG file.
pub fn to_png(svg: &str) -> Result<Vec<u8>, String> {
    let tree = parse(svg)?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).ok_or_else(|| {
        format!(
            "a {} × {} picture is too large",
            size.width(),
            size.height()
        )
    })?;
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| e.to_string())
}

/// The canvas's size and every text of `svg`, laid out as the PNG draws it.
pub fn labels(svg: &str) -> Result<((f32, f32), Vec<Label>), String> {
    let tree = parse(svg)?;
    let mut out = Vec::new();
    collect(tree.root(), &mut out);
    Ok(((tree.size().width(), tree.size().height()), out))
}

fn parse(svg: &str) -> Result<usvg::Tree, String> {
    let mut options = usvg::Options {
        font_family: "DejaVu Sans".to_string(),
        ..usvg::Options::default()
    };
    let fonts = options.fontdb_mut();
    fonts.load_font_data(SANS.to_vec());
    fonts.load_font_data(SANS_BOLD.to_vec());
    fonts.set_sans_serif_family("DejaVu Sans");
    usvg::Tree::from_str(svg, &options).map_err(|e| format!("not a picture: {e}"))
}

fn collect(group: &usvg::Group, out: &mut Vec<Label>) {
    for node in group.children() {
        match node {
            usvg::Node::Group(g) => collect(g, out),
            usvg::Node::Text(t) => {
                let text: String = t.chunks().iter().map(|c| c.text()).collect();
                let b = t.flattened().abs_bounding_box();
                out.push(Label {
                    text,
                    bounds: [b.left(), b.top(), b.right(), b.bottom()],
                });
            }
            _ => {}
        }
    }
}

/// The pairs of labels that overlap, and the labels off the canvas, as sentences (empty when
/// the picture is legible).
pub fn legibility(canvas: (f32, f32), labels: &[Label]) -> Vec<String> {
    let mut problems = Vec::new();
    for l in labels {
        let [x0, y0, x1, y1] = l.bounds;
        if x0 < 0.0 || y0 < 0.0 || x1 > canvas.0 || y1 > canvas.1 {
            problems.push(format!("`{}` at {:?} leaves the canvas", l.text, l.bounds));
        }
    }
    for (i, a) in labels.iter().enumerate() {
        for b in &labels[i + 1..] {
            let apart = a.bounds[2] <= b.bounds[0]
                || b.bounds[2] <= a.bounds[0]
                || a.bounds[3] <= b.bounds[1]
                || b.bounds[3] <= a.bounds[1];
            if !apart {
                problems.push(format!("`{}` overlaps `{}`", a.text, b.text));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svg(texts: &str) -> String {
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"200\" height=\"100\">{texts}</svg>"
        )
    }

    #[test]
    fn overlapping_and_stray_labels_are_found() {
        let apart = svg("<text x=\"10\" y=\"20\" font-size=\"12\">one</text>\
             <text x=\"10\" y=\"60\" font-size=\"12\">two</text>");
        let (canvas, texts) = labels(&apart).expect("parses");
        assert_eq!(texts.len(), 2);
        assert!(texts[0].bounds[2] > texts[0].bounds[0], "{texts:?}");
        assert!(legibility(canvas, &texts).is_empty());
        let piled = svg("<text x=\"10\" y=\"20\" font-size=\"12\">one</text>\
             <text x=\"14\" y=\"24\" font-size=\"12\">two</text>\
             <text x=\"190\" y=\"60\" font-size=\"12\">off</text>");
        let (canvas, texts) = labels(&piled).expect("parses");
        let problems = legibility(canvas, &texts);
        assert_eq!(problems.len(), 2, "{problems:?}");
    }

    #[test]
    fn a_png_has_the_canvas_size() {
        let png = to_png(&svg("<text x=\"10\" y=\"20\">x</text>")).expect("renders");
        assert_eq!(&png[1..4], b"PNG");
        assert_eq!(
            u32::from_be_bytes([png[16], png[17], png[18], png[19]]),
            200
        );
        assert!(wants_png(Path::new("a/b.PNG")) && !wants_png(Path::new("b.svg")));
    }
}
