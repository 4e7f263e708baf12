//! The table against everything that lists index types: lance.h's enums,
//! the tool's type lists, the Python training codec and the two answers
//! `boundary::params` keeps.  Each failure names the file and the types
//! that differ.  (Each row's build parameters: `build_params`'s tests.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::*;
use crate::boundary::params::vector_index_type;

fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The text from `start` to the first `end` after it.
fn block<'a>(text: &'a str, start: &str, end: &str, file: &str) -> &'a str {
    let from = text.find(start).unwrap_or_else(|| panic!("{file}: no `{start}`"));
    let rest = &text[from + start.len()..];
    &rest[..rest.find(end).unwrap_or_else(|| panic!("{file}: no `{end}` after `{start}`"))]
}

/// The table's names of a family, with their codes.
fn table(family: Family) -> BTreeMap<String, i32> {
    KINDS.iter().filter(|k| k.family == family).map(|k| (k.name.to_string(), k.code)).collect()
}

/// Where `found` (a file's list of a family) differs from the table, one
/// line per type.
fn differences(file: &str, list: &str, found: &BTreeMap<String, i32>, family: Family) -> Vec<String> {
    let want = table(family);
    let mut out = Vec::new();
    for (name, code) in &want {
        match found.get(name) {
            None => out.push(format!("{file}: {list} lacks {name} ({code}), which index/kinds.rs has")),
            Some(c) if c != code => out.push(format!("{file}: {list} gives {name} = {c}; index/kinds.rs has {code}")),
            Some(_) => {}
        }
    }
    for (name, code) in found {
        if !want.contains_key(name) {
            out.push(format!("{file}: {list} has {name} ({code}), which index/kinds.rs lacks"));
        }
    }
    out
}

fn assert_none(problems: Vec<String>) {
    assert!(problems.is_empty(), "index types out of step with src/index/kinds.rs:\n{}", problems.join("\n"));
}

/// `PREFIX_NAME = 12` lines of one `typedef enum { ... } <name>;` of lance.h.
fn header_enum(header: &str, enum_name: &str, prefix: &str) -> BTreeMap<String, i32> {
    let end = header.find(&format!("}} {enum_name};")).unwrap_or_else(|| panic!("lance.h: no enum {enum_name}"));
    let start = header[..end].rfind("typedef enum").expect("lance.h: an enum without typedef");
    let mut out = BTreeMap::new();
    for line in header[start..end].lines() {
        let Some(rest) = line.trim().strip_prefix(prefix) else { continue };
        let Some((name, value)) = rest.split_once('=') else { continue };
        let digits: String = value.trim().chars().take_while(|c| c.is_ascii_digit()).collect();
        out.insert(name.trim().to_string(), digits.parse().expect("lance.h: an enum value that is not a number"));
    }
    out
}

#[test]
fn lance_h_enums_match_the_table() {
    let header = read("include/lance/lance.h");
    let vector = header_enum(&header, "LanceVectorIndexType", "LANCE_INDEX_");
    let scalar = header_enum(&header, "LanceScalarIndexType", "LANCE_SCALAR_");
    let mut problems = differences("include/lance/lance.h", "LanceVectorIndexType", &vector, Family::Vector);
    problems.extend(differences("include/lance/lance.h", "LanceScalarIndexType", &scalar, Family::Scalar));
    assert_none(problems);
}

/// The tool's `{"NAME", PREFIX_NAME}` rows of one type list, with their
/// codes as lance.h gives them.
fn tool_list(tool: &str, list: &str, prefix: &str, codes: &BTreeMap<String, i32>) -> BTreeMap<String, i32> {
    let file = "tools/lance_index.c";
    let mut out = BTreeMap::new();
    for row in block(tool, &format!("{list}[] = {{"), "};", file).split('{').skip(1) {
        let (name, constant) = row.split_once(',').unwrap_or_else(|| panic!("{file}: {list}: a row without a comma"));
        let name = name.trim().trim_matches('"');
        let constant = constant.trim().trim_end_matches([',', '}', ' ']);
        assert_eq!(constant, format!("{prefix}{name}"), "{file}: {list} names {name} by {constant}");
        out.insert(name.to_string(), codes.get(name).copied().unwrap_or(-1));
    }
    out
}

#[test]
fn the_tools_type_lists_match_the_table() {
    let tool = read("tools/lance_index.c");
    let file = "tools/lance_index.c";
    let vector = tool_list(&tool, "vector_types", "LANCE_INDEX_", &table(Family::Vector));
    let scalar = tool_list(&tool, "scalar_types", "LANCE_SCALAR_", &table(Family::Scalar));
    let mut problems = differences(file, "vector_types[]", &vector, Family::Vector);
    problems.extend(differences(file, "scalar_types[]", &scalar, Family::Scalar));
    // The types the tool gives a PQ codebook: the table's PQ types.
    let body = block(&tool, "int uses_pq_codebook(", "}", file);
    let have: BTreeSet<String> = body
        .split("LANCE_INDEX_")
        .skip(1)
        .map(|s| s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect())
        .collect();
    let want: BTreeSet<String> =
        KINDS.iter().filter(|k| k.quantizer == Quantizer::Pq).map(|k| k.name.to_string()).collect();
    if want != have {
        problems
            .push(format!("{file}: uses_pq_codebook() names {have:?}; the PQ types of index/kinds.rs are {want:?}"));
    }
    assert_none(problems);
}

#[test]
fn the_python_codec_matches_the_table() {
    let file = "python/lance_c_training.py";
    let text = read(file);
    let mut found = BTreeMap::new();
    for pair in block(&text, "INDEX_TYPES = {", "}", file).split(',') {
        let Some((code, name)) = pair.split_once(':') else { continue };
        let code = code.trim().parse().unwrap_or_else(|_| panic!("{file}: INDEX_TYPES: '{code}' is not a code"));
        found.insert(name.trim().trim_matches('"').to_string(), code);
    }
    assert_none(differences(file, "INDEX_TYPES", &found, Family::Vector));
}

#[test]
fn rows_are_distinct_and_numbered_as_the_core_numbers_them() {
    for (i, k) in KINDS.iter().enumerate() {
        for other in &KINDS[i + 1..] {
            assert!(k.code != other.code && k.name != other.name, "{} and {} share a code or name", k.name, other.name);
            assert_ne!(k.segment_name, other.segment_name, "{} and {} share a segment name", k.name, other.name);
            assert_ne!(k.core, other.core, "{} and {} share a core type", k.name, other.name);
        }
        assert_eq!(IndexType::try_from(k.code).ok(), Some(k.core), "{}: the core numbers {} otherwise", k.name, k.code);
        assert_eq!(k.family == Family::Vector, k.core.is_vector(), "{}: family", k.name);
        assert_eq!(kind(k.code).map(|r| r.name), Some(k.name));
        assert_eq!(by_segment_name(k.segment_name).map(|r| r.code), Some(k.code));
        if k.family == Family::Vector {
            assert_eq!(vector_of(k.hnsw, k.quantizer).map(|r| r.code), Some(k.code), "{}: graph and quantizer", k.name);
            assert_eq!(k.segment_uuid, SegmentUuid::Caller, "{}: a vector segment's UUID is the caller's", k.name);
        } else {
            assert_eq!((k.hnsw, k.quantizer, k.rotation), (false, Quantizer::None, false), "{}", k.name);
        }
    }
}

/// The answer `boundary::params` still gives for a caller outside this
/// table's reach (see its doc comment), and who picks a segment's UUID,
/// agree with the table for every code.
#[test]
fn the_boundarys_answer_agrees_with_the_table() {
    for code in -2..=300 {
        assert_eq!(vector_index_type(code, "t").is_ok(), vector_kind(code, "t").is_ok(), "code {code}");
        if let Ok(core) = IndexType::try_from(code) {
            let table = KINDS.iter().any(|k| k.core == core && k.segment_uuid == SegmentUuid::Core);
            assert_eq!(super::core_picks_segment_uuid(core), table, "{core}: who picks a segment's UUID");
        }
    }
}

#[test]
fn refusals_list_the_tables_codes() {
    let err = scalar_kind(6).unwrap_err();
    assert!(
        err.message.starts_with("index_type = 6 is not a LanceScalarIndexType (1 = BTREE, 2 = BITMAP,"),
        "{}",
        err.message
    );
    let err = vector_kind(100, "params->index_type").unwrap_err();
    assert!(err.message.ends_with("106 = IVF_HNSW_FLAT, 107 = IVF_RQ)"), "{}", err.message);
    assert_eq!(
        (uses_pq(IVF_HNSW_PQ), uses_pq(IVF_SQ), has_rotation(IVF_RQ), has_rotation(IVF_PQ)),
        (true, false, true, false)
    );
    assert_eq!(vector_type_name(IVF_HNSW_SQ), Some("IVF_HNSW_SQ"));
    assert_eq!(vector_type_name(BTREE), None);
}
