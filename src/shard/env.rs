//! Which shard this process is, from `--shard`, `ANNBENCH_SHARD`, or the variables of the
//! engine that started it: Slurm job arrays and Kubernetes Indexed Jobs.

use super::Shard;
use crate::{Error, Result};

/// The shard given by `flag` (`--shard I/N`), else by the environment (`var` looks a variable
/// up; `std::env::var(..).ok()` in the program, a map in tests). `None`: run the whole plan.
///
/// In order: `--shard`, `ANNBENCH_SHARD=I/N`, a Slurm array task (`SLURM_ARRAY_TASK_ID` with
/// `SLURM_ARRAY_TASK_COUNT`, or with `SLURM_ARRAY_TASK_MIN`/`MAX` and `STEP`), a Kubernetes
/// Indexed Job pod (`JOB_COMPLETION_INDEX` with `JOB_COMPLETIONS`, which the manifest sets to
/// the Job's `completions`: Kubernetes does not export it).
pub fn detect(flag: Option<&str>, var: &dyn Fn(&str) -> Option<String>) -> Result<Option<Shard>> {
    if let Some(text) = flag {
        return Shard::parse(text, "--shard").map(Some);
    }
    if let Some(text) = var("ANNBENCH_SHARD").filter(|t| !t.trim().is_empty()) {
        return Shard::parse(&text, "ANNBENCH_SHARD").map(Some);
    }
    if let Some(shard) = slurm(var)? {
        return Ok(Some(shard));
    }
    kubernetes(var)
}

/// A non-negative integer variable, or an error naming it.
fn int(var: &dyn Fn(&str) -> Option<String>, name: &str) -> Result<Option<usize>> {
    match var(name) {
        None => Ok(None),
        Some(v) if v.trim().is_empty() => Ok(None),
        Some(v) => v.trim().parse().map(Some).map_err(|_| {
            Error::Config(format!(
                "{name}='{v}' is not a non-negative integer; fix the variable or pass --shard I/N"
            ))
        }),
    }
}

/// Slurm array tasks: the index is the task id's rank in `MIN, MIN+STEP, ..., MAX`.
fn slurm(var: &dyn Fn(&str) -> Option<String>) -> Result<Option<Shard>> {
    let Some(id) = int(var, "SLURM_ARRAY_TASK_ID")? else {
        return Ok(None);
    };
    let min = int(var, "SLURM_ARRAY_TASK_MIN")?;
    let max = int(var, "SLURM_ARRAY_TASK_MAX")?;
    let step = int(var, "SLURM_ARRAY_TASK_STEP")?;
    let task_count = int(var, "SLURM_ARRAY_TASK_COUNT")?;
    // Every variable that was read, for the log and for errors.
    let source: Vec<String> = [
        ("ID", Some(id)),
        ("MIN", min),
        ("MAX", max),
        ("STEP", step),
        ("COUNT", task_count),
    ]
    .iter()
    .filter_map(|(n, v)| v.map(|v| format!("SLURM_ARRAY_TASK_{n}={v}")))
    .collect();
    let step = step.unwrap_or(1).max(1);
    let base = min.unwrap_or(0);
    let span = match (min, max) {
        (Some(lo), Some(hi)) if hi >= lo => Some((hi - lo) / step + 1),
        _ => None,
    };
    let Some(count) = task_count.or(span) else {
        return Err(Error::Config(format!(
            "SLURM_ARRAY_TASK_ID={id} is set but neither SLURM_ARRAY_TASK_COUNT nor \
             SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_MAX are: annbench cannot tell how many \
             shards there are; pass --shard I/N"
        )));
    };
    let gaps = || {
        Error::Config(format!(
            "the Slurm array is not a plain range ({}): annbench numbers shards by their rank in \
             the array, which needs consecutive ids such as --array=0-{} (a %limit is fine); or \
             pass --shard I/N",
            source.join(", "),
            count.saturating_sub(1)
        ))
    };
    if id < base || (id - base) % step != 0 || span.is_some_and(|s| s != count) {
        return Err(gaps());
    }
    let index = (id - base) / step;
    if count == 0 || index >= count {
        return Err(gaps());
    }
    super::check_count(count, &source.join(", "))?;
    Ok(Some(Shard {
        index,
        count,
        source: source.join(", "),
    }))
}

/// Kubernetes Indexed Jobs: `JOB_COMPLETION_INDEX` counts from 0.
fn kubernetes(var: &dyn Fn(&str) -> Option<String>) -> Result<Option<Shard>> {
    let Some(index) = int(var, "JOB_COMPLETION_INDEX")? else {
        return Ok(None);
    };
    let Some(count) = int(var, "JOB_COMPLETIONS")? else {
        return Err(Error::Config(format!(
            "JOB_COMPLETION_INDEX={index} is set but JOB_COMPLETIONS is not: Kubernetes does not \
             export the Job's completion count, so set JOB_COMPLETIONS to its spec.completions in \
             the pod template (deploy/kubernetes/annbench-job.yaml does), or pass --shard I/N"
        )));
    };
    if index >= count {
        return Err(Error::Config(format!(
            "JOB_COMPLETION_INDEX={index} is not below JOB_COMPLETIONS={count}: set \
             JOB_COMPLETIONS to the Job's spec.completions"
        )));
    }
    super::check_count(count, &format!("JOB_COMPLETIONS={count}"))?;
    Ok(Some(Shard {
        index,
        count,
        source: format!("JOB_COMPLETION_INDEX={index}, JOB_COMPLETIONS={count}"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn with(vars: &[(&str, &str)]) -> Result<Option<Shard>> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        detect(None, &|name| map.get(name).cloned())
    }

    fn shard(vars: &[(&str, &str)]) -> (usize, usize) {
        let s = with(vars).unwrap().expect("a shard");
        (s.index, s.count)
    }

    fn error(vars: &[(&str, &str)]) -> String {
        with(vars).unwrap_err().to_string()
    }

    #[test]
    fn nothing_set_means_the_whole_plan() {
        assert_eq!(with(&[]).unwrap(), None);
        assert_eq!(with(&[("ANNBENCH_SHARD", " ")]).unwrap(), None);
    }

    #[test]
    fn the_flag_wins_then_annbench_shard() {
        let slurm = [
            ("SLURM_ARRAY_TASK_ID", "0"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ];
        let map: HashMap<&str, &str> = slurm.into_iter().collect();
        let var = |n: &str| map.get(n).map(|v| v.to_string());
        let s = detect(Some("3/3"), &var).unwrap().unwrap();
        assert_eq!((s.index, s.count, s.source.as_str()), (2, 3, "--shard"));
        let s = with(&[("ANNBENCH_SHARD", "1/2"), slurm[0], slurm[1]])
            .unwrap()
            .unwrap();
        assert_eq!(
            (s.index, s.count, s.source.as_str()),
            (0, 2, "ANNBENCH_SHARD")
        );
        assert!(error(&[("ANNBENCH_SHARD", "5/2")]).contains("ANNBENCH_SHARD '5/2'"));
    }

    #[test]
    fn slurm_arrays_from_zero_one_or_with_a_step() {
        // --array=0-3: ids 0..3.
        for id in 0..4 {
            let v = id.to_string();
            let vars = [
                ("SLURM_ARRAY_TASK_ID", v.as_str()),
                ("SLURM_ARRAY_TASK_COUNT", "4"),
                ("SLURM_ARRAY_TASK_MIN", "0"),
                ("SLURM_ARRAY_TASK_MAX", "3"),
                ("SLURM_ARRAY_TASK_STEP", "1"),
            ];
            assert_eq!(shard(&vars), (id, 4));
        }
        // --array=1-3: ids 1..3 are shards 1/3..3/3 (index 0..2).
        let one = |id: &'static str| {
            shard(&[
                ("SLURM_ARRAY_TASK_ID", id),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_MAX", "3"),
            ])
        };
        assert_eq!([one("1"), one("2"), one("3")], [(0, 3), (1, 3), (2, 3)]);
        // --array=10-20:5: ids 10, 15, 20 (the variables Slurm 22.05 sets).
        let step = shard(&[
            ("SLURM_ARRAY_TASK_ID", "15"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
            ("SLURM_ARRAY_TASK_MIN", "10"),
            ("SLURM_ARRAY_TASK_MAX", "20"),
            ("SLURM_ARRAY_TASK_STEP", "5"),
        ]);
        assert_eq!(step, (1, 3));
        // The count from MIN and MAX alone, and from ID and COUNT alone (ids from 0).
        let s = shard(&[
            ("SLURM_ARRAY_TASK_ID", "7"),
            ("SLURM_ARRAY_TASK_MIN", "5"),
            ("SLURM_ARRAY_TASK_MAX", "8"),
        ]);
        assert_eq!(s, (2, 4));
        let s = shard(&[
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
        ]);
        assert_eq!(s, (2, 3));
        let src = with(&[
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
        ])
        .unwrap()
        .unwrap()
        .source;
        assert_eq!(src, "SLURM_ARRAY_TASK_ID=2, SLURM_ARRAY_TASK_COUNT=3");
    }

    #[test]
    fn slurm_arrays_that_are_not_ranges_are_refused() {
        // --array=1,3,7: three tasks spread over 1..7 (the variables Slurm 22.05 sets).
        let e = error(&[
            ("SLURM_ARRAY_TASK_ID", "7"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "7"),
            ("SLURM_ARRAY_TASK_STEP", "1"),
        ]);
        assert!(
            e.contains("not a plain range") && e.contains("--array=0-2"),
            "{e}"
        );
        // Even the first task refuses: the other tasks could not cover the plan.
        let e = error(&[
            ("SLURM_ARRAY_TASK_ID", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "7"),
        ]);
        assert!(e.contains("not a plain range"), "{e}");
        let e = error(&[
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
        ]);
        assert!(e.contains("not a plain range"), "{e}");
        let e = error(&[("SLURM_ARRAY_TASK_ID", "3")]);
        assert!(
            e.contains("SLURM_ARRAY_TASK_COUNT") && e.contains("--shard"),
            "{e}"
        );
        let e = error(&[
            ("SLURM_ARRAY_TASK_ID", "x"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
        ]);
        assert!(e.contains("SLURM_ARRAY_TASK_ID='x'"), "{e}");
    }

    #[test]
    fn kubernetes_indexed_jobs() {
        let s = with(&[("JOB_COMPLETION_INDEX", "0"), ("JOB_COMPLETIONS", "3")])
            .unwrap()
            .unwrap();
        assert_eq!((s.index, s.count, s.to_string()), (0, 3, "1/3".to_string()));
        assert_eq!(
            shard(&[("JOB_COMPLETION_INDEX", "2"), ("JOB_COMPLETIONS", "3")]),
            (2, 3)
        );
        let e = error(&[("JOB_COMPLETION_INDEX", "1")]);
        assert!(
            e.contains("JOB_COMPLETIONS") && e.contains("spec.completions"),
            "{e}"
        );
        let e = error(&[("JOB_COMPLETION_INDEX", "3"), ("JOB_COMPLETIONS", "3")]);
        assert!(e.contains("not below"), "{e}");
        // Slurm first when both are set (a Slurm job inside a pod is the stranger case).
        let s = shard(&[
            ("JOB_COMPLETION_INDEX", "1"),
            ("JOB_COMPLETIONS", "2"),
            ("SLURM_ARRAY_TASK_ID", "0"),
            ("SLURM_ARRAY_TASK_COUNT", "5"),
        ]);
        assert_eq!(s, (0, 5));
    }
}
