//! Target files: presets round-trip through TOML, and a bad or missing field is named.

use wsel_target::{Coord, Dir, Target, TargetError};

#[test]
fn presets_validate_and_round_trip_through_toml() {
    for name in wsel_target::PRESET_NAMES {
        let t = Target::preset(name).expect("preset");
        t.validate().expect("valid preset");
        let text = t.to_toml_string();
        let back = Target::from_toml_str(&text).expect("round trip");
        assert_eq!(back, t, "{name}");
        assert!(
            !wsel_target::sources(name).is_empty(),
            "{name} documents its sources"
        );
    }
    assert_eq!(Target::wse2().width, 750);
    assert_eq!(Target::wse2().height, 994);
    assert_eq!(Target::wse3().fp16.fma, 8);
    assert!(matches!(
        Target::preset("wse9"),
        Err(TargetError::UnknownPreset(_))
    ));
}

fn dev_text() -> String {
    Target::dev().to_toml_string()
}

fn error_for(text: &str) -> String {
    match Target::from_toml_str(text) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_missing_field_is_named() {
    let text: String = dev_text()
        .lines()
        .filter(|l| !l.starts_with("hop_latency"))
        .map(|l| format!("{l}\n"))
        .collect();
    let msg = error_for(&text);
    assert!(msg.contains("hop_latency"), "{msg}");
    assert!(msg.contains("missing"), "{msg}");
}

#[test]
fn a_missing_field_in_a_table_is_named() {
    let text: String = dev_text()
        .lines()
        .filter(|l| !l.starts_with("latency_cycles"))
        .map(|l| format!("{l}\n"))
        .collect();
    let msg = error_for(&text);
    assert!(msg.contains("weight_store.latency_cycles"), "{msg}");
}

#[test]
fn a_field_of_the_wrong_type_is_named() {
    let text = dev_text().replace("sram_bytes = 4096", "sram_bytes = \"lots\"");
    let err = Target::from_toml_str(&text).expect_err("bad type");
    match &err {
        TargetError::Parse { field, .. } => assert_eq!(field.as_deref(), Some("sram_bytes")),
        other => panic!("unexpected {other:?}"),
    }
    assert!(err.to_string().contains("sram_bytes"), "{err}");
}

#[test]
fn a_bad_field_in_a_table_is_named_with_its_table() {
    let text = dev_text().replace("latency_cycles = 100", "latency_cycles = -3");
    let err = Target::from_toml_str(&text).expect_err("negative");
    assert!(
        err.to_string().contains("weight_store.latency_cycles"),
        "{err}"
    );
}

#[test]
fn an_unknown_field_is_named() {
    let text = format!("frobnicate = 3\n{}", dev_text());
    let msg = error_for(&text);
    assert!(msg.contains("frobnicate"), "{msg}");
}

#[test]
fn an_unusable_value_is_named() {
    let text = dev_text().replace("hop_latency = 2", "hop_latency = 0");
    let err = Target::from_toml_str(&text).expect_err("zero latency");
    assert_eq!(
        err,
        TargetError::Field {
            field: "hop_latency".to_string(),
            message: "must be at least 1".to_string()
        }
    );
    let msg =
        error_for(&dev_text().replace("link_bytes_per_cycle = 4", "link_bytes_per_cycle = 8"));
    assert!(msg.contains("link_bytes_per_cycle"), "{msg}");
}

#[test]
fn defects_load_from_toml_and_are_checked() {
    let text = format!(
        "{}\n[defects]\ndead_pes = [{{ x = 3, y = 4 }}]\ndead_links = [{{ x = 5, y = 5, dir = \"west\" }}]\n",
        dev_text()
    );
    let t = Target::from_toml_str(&text).expect("defects");
    assert!(t.defects.pe_dead(Coord::new(3, 4)));
    assert!(t.defects.link_dead(Coord::new(4, 5), Dir::East));
    let bad = format!(
        "{}\n[defects]\ndead_pes = [{{ x = 99, y = 4 }}]\n",
        dev_text()
    );
    let msg = error_for(&bad);
    assert!(msg.contains("defects.dead_pes"), "{msg}");
    let bad_dir = format!(
        "{}\n[defects]\ndead_links = [{{ x = 1, y = 1, dir = \"up\" }}]\n",
        dev_text()
    );
    let msg = error_for(&bad_dir);
    assert!(msg.contains("dir"), "{msg}");
}

#[test]
fn absurd_sizes_are_rejected_before_anything_is_allocated() {
    // Found by fuzzing 61cd1ce: the simulator allocated a ring of `hop_latency` slots
    // (309 GB, then SIGABRT) and per-PE tables for a 65535 × 65535 fabric (17 GB); a
    // 20000 × 20000 fabric mapped and ran for minutes.
    let cases = [
        ("hop_latency = 2", "hop_latency = 4294967295", "hop_latency"),
        ("width = 16", "width = 65535", "width"),
        ("height = 16", "height = 20000", "height"),
        ("sram_bytes = 4096", "sram_bytes = 4294967292", "sram_bytes"),
    ];
    for (from, to, field) in cases {
        let err = Target::from_toml_str(&dev_text().replace(from, to)).expect_err(to);
        assert_eq!(err.code(), wsel_target::E0902, "{err}");
        match &err {
            TargetError::Field {
                field: named,
                message,
            } => {
                assert_eq!(named, field);
                assert!(message.contains("over the limit"), "{message}");
            }
            other => panic!("{to}: unexpected {other:?}"),
        }
    }
    // The limits themselves are allowed, and leave room beyond every preset.
    let biggest = dev_text()
        .replace(
            "width = 16",
            &format!("width = {}", wsel_target::MAX_FABRIC_SIDE),
        )
        .replace(
            "hop_latency = 2",
            &format!("hop_latency = {}", wsel_target::MAX_HOP_LATENCY),
        );
    Target::from_toml_str(&biggest).expect("the limits are allowed");
    for name in wsel_target::PRESET_NAMES {
        let t = Target::preset(name).expect("preset");
        assert!(
            t.width.max(t.height) * 3 / 2 <= wsel_target::MAX_FABRIC_SIDE,
            "{name}"
        );
    }
}

#[test]
fn every_error_has_a_code() {
    let missing = Target::load(std::path::Path::new("/nonexistent/t.toml")).expect_err("io");
    assert_eq!(missing.code(), wsel_target::E0901);
    let unknown = Target::preset("wse9").expect_err("preset");
    assert_eq!(unknown.code(), wsel_target::E0901);
    let malformed = Target::from_toml_str("width = [").expect_err("toml");
    assert_eq!(malformed.code(), wsel_target::E0902);
    let codes: Vec<&str> = wsel_target::CODES.iter().map(|(c, _)| *c).collect();
    assert_eq!(codes, [wsel_target::E0901, wsel_target::E0902]);
}

#[test]
fn a_fabric_with_every_pe_dead_is_rejected() {
    let mut t = Target::dev();
    for y in 0..t.height {
        for x in 0..t.width {
            t.defects.add_dead_pe(Coord::new(x, y));
        }
    }
    let err = t.validate().expect_err("all dead");
    assert!(
        err.to_string()
            .contains("every PE of the 16 × 16 fabric is dead"),
        "{err}"
    );
    t.defects.dead_pes.remove(&Coord::new(3, 3));
    t.validate().expect("one live PE is a (small) fabric");
}

#[test]
fn a_target_file_without_a_swarm_gets_the_default_one() {
    let text = dev_text();
    let start = text.find("[swarm]").expect("dev has a [swarm] table");
    let end = text[start + 1..]
        .find("\n[")
        .map_or(text.len(), |i| start + 1 + i);
    let without = format!("{}{}", &text[..start], &text[end..]);
    assert!(!without.contains("fan_out"));
    let t = Target::from_toml_str(&without).expect("loads");
    assert_eq!(t.swarm, wsel_target::Swarm::default());
    assert_eq!(t.swarm, Target::wse2().swarm);
}

#[test]
fn a_swarm_fan_out_of_one_is_named() {
    let text = dev_text().replace("fan_out = 2", "fan_out = 1");
    let message = error_for(&text);
    assert!(message.contains("swarm.fan_out"), "{message}");
    let text = dev_text().replace("packet_bytes = 256", "packet_bytes = 6");
    assert!(error_for(&text).contains("swarm.packet_bytes"));
}

#[test]
fn the_launch_is_optional_and_checked() {
    let text = dev_text();
    assert!(text.contains("cycles_per_column = 0.0"), "{text}");
    let without: String = text
        .lines()
        .filter(|l| !l.starts_with("[launch]") && !l.starts_with("cycles_per_column"))
        .map(|l| format!("{l}\n"))
        .collect();
    let target = Target::from_toml_str(&without).expect("a target without [launch]");
    assert_eq!(target.launch.start(700), 0);
    for bad in ["-1.0", "nan", "2000.0"] {
        let msg = error_for(&text.replace(
            "cycles_per_column = 0.0",
            &format!("cycles_per_column = {bad}"),
        ));
        assert!(msg.contains("launch.cycles_per_column"), "{bad}: {msg}");
    }
    // PE d columns east of the first starts at floor(d · 1.5).
    let launch = wsel_target::Launch {
        cycles_per_column: 1.5,
    };
    let starts: Vec<u64> = (0..5).map(|d| launch.start(d)).collect();
    assert_eq!(starts, [0, 1, 3, 4, 6]);
}

#[test]
fn a_switched_rate_is_optional_read_and_checked() {
    let text = dev_text();
    assert!(
        !text.contains("[switched]"),
        "the default is left out: {text}"
    );
    let slow = format!("{text}\n[switched]\nwest = 2.5\n");
    let target = Target::from_toml_str(&slow).expect("a target with [switched]");
    assert_eq!((target.switched.west, target.switched.east), (2.5, 1.0));
    assert_eq!(Target::from_toml_str(&target.to_toml_string()), Ok(target));
    let msg = error_for(&format!("{text}\n[switched]\nnorth = 0.5\n"));
    assert!(msg.contains("switched.north"), "{msg}");
}
