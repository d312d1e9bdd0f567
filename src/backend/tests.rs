use super::*;

#[test]
fn every_implementation_points_at_its_own_declaration() {
    let decls = crate::registry::ALGORITHMS;
    assert_eq!(ALGORITHMS.len(), decls.len());
    for (a, d) in ALGORITHMS.iter().zip(decls) {
        assert!(std::ptr::eq(a.decl, *d), "{} points at {}", d.name, a.name);
        assert_eq!(a.database.map(|db| db.kind), d.database, "{}", d.name);
    }
}

#[test]
fn the_databases_are_the_registrys_in_its_order() {
    let kinds: Vec<&crate::registry::DatabaseDecl> =
        databases().iter().map(|d| d.kind.decl()).collect();
    assert_eq!(kinds, crate::registry::databases());
}
