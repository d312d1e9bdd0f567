//! The shared SQL machinery ([`crate::backend::sql`]) on a MariaDB connection. Statements with
//! arguments or results use the binary protocol, so numbers come back as numbers.

use super::errors::sql_err;
use crate::Result;
use crate::backend::sql::{Arg, Cell, Dialect, SqlConn};
use mysql::prelude::Queryable;
use mysql::{Conn, Value};

impl SqlConn for Conn {
    fn dialect(&self) -> &'static dyn Dialect {
        &super::dialect::DIALECT
    }

    fn run(&mut self, sql: &str, what: &str) -> Result<()> {
        self.query_drop(sql).map_err(|e| sql_err(e, what))
    }

    fn run_args(&mut self, sql: &str, args: &[Arg<'_>], what: &str) -> Result<()> {
        self.exec_drop(sql, values(args))
            .map_err(|e| sql_err(e, what))
    }

    fn first_row(&mut self, sql: &str, args: &[Arg<'_>], what: &str) -> Result<Option<Vec<Cell>>> {
        let row: Option<mysql::Row> = self
            .exec_first(sql, values(args))
            .map_err(|e| sql_err(e, what))?;
        Ok(row.map(|r| r.unwrap().into_iter().map(cell).collect()))
    }

    fn int_column(&mut self, sql: &str, args: &[Arg<'_>], what: &str) -> Result<Vec<i64>> {
        let rows: Vec<Option<i64>> = self
            .exec(sql, values(args))
            .map_err(|e| sql_err(e, what))?;
        Ok(rows.into_iter().flatten().collect())
    }
}

fn values(args: &[Arg<'_>]) -> Vec<Value> {
    args.iter()
        .map(|a| match *a {
            Arg::Null => Value::NULL,
            Arg::Text(s) => Value::from(s),
            Arg::Int(n) => Value::from(n),
            Arg::Float(x) => Value::from(x),
        })
        .collect()
}

fn cell(v: Value) -> Cell {
    match v {
        Value::NULL => Cell::Null,
        Value::Int(n) => Cell::Int(n),
        Value::UInt(n) => i64::try_from(n).map_or(Cell::Float(n as f64), Cell::Int),
        Value::Float(x) => Cell::Float(x.into()),
        Value::Double(x) => Cell::Float(x),
        Value::Bytes(b) => Cell::Text(String::from_utf8_lossy(&b).into_owned()),
        other => Cell::Text(other.as_sql(true)),
    }
}
