//! Reading data as NumPy writes it: `.npy` files of every dtype the conversions know, `.npz`
//! archives by name (stored and deflated), float64 inputs rounded with a note, labels of any
//! integer width, and the errors with their codes. The files are made by NumPy's format,
//! written here with npyz (a `.npy` file) and the zip crate (an archive of them).

use std::io::Write;
use std::path::Path;

use npyz::WriterBuilder;
use wsel_data::convert::Float64;
use wsel_data::{DataRef, TensorError, read_labels, read_tensor};
use wsel_ir::kernel::ScalarTy;

fn temp_dir(name: &str) -> tempfile::TempDir {
    let prefix = format!("wsel-data-{name}-");
    let dir = tempfile::Builder::new().prefix(&prefix).tempdir();
    dir.expect("scratch folder")
}

fn npy<T: npyz::Serialize + npyz::AutoSerialize + Copy>(shape: &[u64], values: &[T]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut writer = npyz::WriteOptions::<T>::new()
        .default_dtype()
        .shape(shape)
        .writer(&mut out)
        .begin_nd()
        .expect("npy header");
    writer.extend(values.iter().copied()).expect("npy values");
    writer.finish().expect("npy end");
    out
}

fn npz(path: &Path, members: &[(&str, Vec<u8>)], method: zip::CompressionMethod) {
    let file = std::fs::File::create(path).expect("npz file");
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default().compression_method(method);
    for (name, bytes) in members {
        zip.start_file(format!("{name}.npy"), options)
            .expect("member");
        zip.write_all(bytes).expect("member bytes");
    }
    zip.finish().expect("npz end");
}

#[test]
fn npz_members_are_read_by_the_tensors_name() {
    let scratch = temp_dir("npz");
    let dir = scratch.path();
    let w = npy(&[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = npy(&[3], &[0.5f32, 0.25, 0.125]);
    for method in [
        zip::CompressionMethod::Stored,
        zip::CompressionMethod::Deflated,
    ] {
        let path = dir.join(format!("params-{method:?}.npz"));
        npz(&path, &[("w", w.clone()), ("b", b.clone())], method);
        let read = read_tensor(
            &DataRef::new(&path, "w"),
            ScalarTy::F32,
            &[Some(2), Some(3)],
            Float64::Refuse,
        )
        .expect("w");
        assert_eq!(read.tensor.to_f32(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let missing = read_tensor(
            &DataRef::new(&path, "w3"),
            ScalarTy::F32,
            &[Some(2), Some(3)],
            Float64::Refuse,
        )
        .expect_err("no w3");
        assert_eq!(missing.code(), "E0801");
        assert!(
            missing
                .to_string()
                .contains("the archive has no array `w3` (it has `w`, `b`)"),
            "{missing}"
        );
    }
}

#[test]
fn float64_is_rounded_for_inputs_and_refused_for_params() {
    let scratch = temp_dir("f64");
    let dir = scratch.path();
    let path = dir.join("x.npy");
    std::fs::write(&path, npy(&[2, 2], &[0.1f64, 0.2, 0.3, 0.4])).expect("write");
    let data = DataRef::new(&path, "x");
    let read = read_tensor(&data, ScalarTy::F32, &[None, Some(2)], Float64::Convert).expect("x");
    assert_eq!(read.converted_from.as_deref(), Some("float64"));
    assert_eq!(read.tensor.to_f32(), [0.1f32, 0.2, 0.3, 0.4]);
    let refused =
        read_tensor(&data, ScalarTy::F32, &[Some(2), Some(2)], Float64::Refuse).expect_err("param");
    assert!(matches!(refused, TensorError::Dtype { .. }), "{refused}");
}

#[test]
fn labels_of_any_integer_width() {
    let scratch = temp_dir("labels");
    let dir = scratch.path();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("u8", npy(&[3], &[1u8, 2, 3])),
        ("i16", npy(&[3], &[1i16, 2, 3])),
        ("i64", npy(&[3], &[1i64, 2, 3])),
        ("u64", npy(&[3], &[1u64, 2, 3])),
    ];
    for (name, bytes) in cases {
        let path = dir.join(format!("{name}.npy"));
        std::fs::write(&path, bytes).expect("write");
        assert_eq!(read_labels(&path, 2).expect(name), [1, 2]);
    }
    let floats = dir.join("floats.npy");
    std::fs::write(&floats, npy(&[3], &[1.0f32, 2.0, 3.0])).expect("write");
    assert_eq!(read_labels(&floats, 3).expect_err("floats").code(), "E0802");
}

#[test]
fn a_transposed_shape_is_said_to_look_transposed() {
    let scratch = temp_dir("reversed");
    let dir = scratch.path();
    let path = dir.join("w.npy");
    std::fs::write(&path, npy(&[3, 2], &[0f32; 6])).expect("write");
    let data = DataRef::new(&path, "w");
    let error =
        read_tensor(&data, ScalarTy::F32, &[Some(2), Some(3)], Float64::Refuse).expect_err("shape");
    assert_eq!(error.code(), "E0803");
    assert!(
        error
            .to_string()
            .ends_with("it looks transposed: its `.T` has the needed shape"),
        "{error}"
    );
    let other =
        read_tensor(&data, ScalarTy::F32, &[Some(3), Some(3)], Float64::Refuse).expect_err("shape");
    assert!(!other.to_string().contains("transposed"), "{other}");
}

#[test]
fn float32_values_are_read_bit_for_bit_and_a_short_file_fails_as_npyz_reads_it() {
    // More than one block of the reader (1 MiB), with NaN payloads, signed zeros and
    // subnormals among ordinary values.
    let special = [
        f32::from_bits(0x7fc0_1234),
        -0.0,
        0.0,
        f32::from_bits(1),
        -1.5e-39,
    ];
    let values: Vec<f32> = (0..300_000u32)
        .map(|i| match special.get((i % 1000) as usize) {
            Some(&v) => v,
            None => (i as f32).sin() * 1e3,
        })
        .collect();
    let bytes = npy(&[3, 100_000], &values);
    let array = wsel_data::array::read_array(&bytes[..]).expect("read");
    let wsel_data::Values::F32(read) = array.values else {
        panic!("not float32: {:?}", array.dtype);
    };
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&read), bits(&values));
    assert_eq!(
        (array.dtype.as_str(), array.shape),
        ("float32", vec![3, 100_000])
    );

    let short = &bytes[..bytes.len() - 2];
    let npyz_error = npyz::NpyFile::new(short)
        .expect("header")
        .into_vec::<f32>()
        .expect_err("a short file")
        .to_string();
    let error = wsel_data::array::read_array(short).expect_err("a short file");
    assert_eq!(error, npyz_error);
}
