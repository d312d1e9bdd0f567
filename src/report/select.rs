//! Narrowing a loaded result set by label and client count, with errors that say what is
//! there instead.

use crate::results::PointResult;
use std::collections::BTreeSet;

/// Keep the points with `label` (when given) and `clients` (when given). An error naming what
/// the results do hold when nothing is left.
pub fn select(
    mut points: Vec<PointResult>,
    label: Option<&str>,
    clients: Option<usize>,
) -> crate::Result<Vec<PointResult>> {
    if let Some(label) = label {
        let labels: BTreeSet<String> = points
            .iter()
            .map(|p| p.label.clone().unwrap_or_else(|| "(none)".into()))
            .collect();
        points.retain(|p| p.label.as_deref() == Some(label));
        if points.is_empty() {
            return Err(crate::Error::Config(format!(
                "--label {label}: no results have that label; labels present: {}",
                labels.into_iter().collect::<Vec<_>>().join(", ")
            )));
        }
    }
    if let Some(clients) = clients {
        let counts: BTreeSet<usize> = points.iter().map(|p| p.clients).collect();
        points.retain(|p| p.clients == clients);
        if points.is_empty() {
            let list: Vec<String> = counts.iter().map(usize::to_string).collect();
            return Err(crate::Error::Config(format!(
                "--clients {clients}: no results were measured with that client count; \
                 client counts present: {}",
                list.join(", ")
            )));
        }
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testutil::point;

    #[test]
    fn filters_and_names_what_is_there() {
        let mut a = point("mariadb", &[], &[], 1.0, 1.0);
        a.label = Some("v1".into());
        let mut b = a.clone();
        b.clients = 4;
        let kept = select(vec![a.clone(), b.clone()], Some("v1"), Some(4)).unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].clients, 4);
        let err = select(vec![a.clone(), b.clone()], Some("v2"), None).unwrap_err();
        assert!(err.to_string().contains("labels present: v1"), "{err}");
        let err = select(vec![a, b], None, Some(2)).unwrap_err();
        assert!(err.to_string().contains("present: 1, 4"), "{err}");
    }
}
