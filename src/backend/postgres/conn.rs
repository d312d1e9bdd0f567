//! The shared SQL machinery ([`crate::backend::sql`]) on a PostgreSQL connection.

use super::errors::{is_duplicate, pg_err};
use crate::Result;
use crate::backend::sql::{Arg, Cell, Dialect, SqlConn};
use postgres::types::{ToSql, Type};
use postgres::{Client, Row};

impl SqlConn for Client {
    fn dialect(&self) -> &'static dyn Dialect {
        &super::dialect::DIALECT
    }

    fn run(&mut self, sql: &str, what: &str) -> Result<()> {
        self.batch_execute(sql).map_err(|e| pg_err(e, what))
    }

    fn create_if_missing(&mut self, sql: &str, what: &str) -> Result<()> {
        match self.batch_execute(sql) {
            Err(e) if is_duplicate(&e) => Ok(()),
            r => r.map_err(|e| pg_err(e, what)),
        }
    }

    fn run_args(&mut self, sql: &str, args: &[Arg<'_>], what: &str) -> Result<()> {
        let stmt = self.prepare(sql).map_err(|e| pg_err(e, what))?;
        let values = bind(args, stmt.params());
        let refs: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v.as_ref()).collect();
        self.execute(&stmt, &refs).map_err(|e| pg_err(e, what))?;
        Ok(())
    }

    fn first_row(&mut self, sql: &str, args: &[Arg<'_>], what: &str) -> Result<Option<Vec<Cell>>> {
        let stmt = self.prepare(sql).map_err(|e| pg_err(e, what))?;
        let values = bind(args, stmt.params());
        let refs: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v.as_ref()).collect();
        let row = self.query_opt(&stmt, &refs).map_err(|e| pg_err(e, what))?;
        Ok(row.map(|r| cells(&r)))
    }

    fn int_column(&mut self, sql: &str, args: &[Arg<'_>], what: &str) -> Result<Vec<i64>> {
        let stmt = self.prepare(sql).map_err(|e| pg_err(e, what))?;
        let values = bind(args, stmt.params());
        let refs: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v.as_ref()).collect();
        let rows = self.query(&stmt, &refs).map_err(|e| pg_err(e, what))?;
        Ok(rows
            .iter()
            .filter_map(|r| cells(r).first().and_then(Cell::int))
            .collect())
    }
}

/// Arguments as the Rust types the statement's parameter types take (an integer column may be
/// int2, int4 or int8).
fn bind(args: &[Arg<'_>], types: &[Type]) -> Vec<Box<dyn ToSql + Sync>> {
    args.iter()
        .zip(types)
        .map(|(a, ty)| -> Box<dyn ToSql + Sync> {
            match *a {
                Arg::Null => Box::new(None::<String>),
                Arg::Text(s) => Box::new(s.to_string()),
                Arg::Int(n) if *ty == Type::INT4 => Box::new(n as i32),
                Arg::Int(n) if *ty == Type::INT2 => Box::new(n as i16),
                Arg::Int(n) => Box::new(n),
                Arg::Float(x) if *ty == Type::FLOAT4 => Box::new(x as f32),
                Arg::Float(x) => Box::new(x),
            }
        })
        .collect()
}

fn cells(row: &Row) -> Vec<Cell> {
    (0..row.len())
        .map(|i| {
            let ty = row.columns()[i].type_();
            let cell = if *ty == Type::INT8 {
                row.try_get::<_, Option<i64>>(i).map(|v| v.map(Cell::Int))
            } else if *ty == Type::INT4 {
                row.try_get::<_, Option<i32>>(i)
                    .map(|v| v.map(|n| Cell::Int(n.into())))
            } else if *ty == Type::INT2 {
                row.try_get::<_, Option<i16>>(i)
                    .map(|v| v.map(|n| Cell::Int(n.into())))
            } else if *ty == Type::FLOAT8 {
                row.try_get::<_, Option<f64>>(i).map(|v| v.map(Cell::Float))
            } else if *ty == Type::FLOAT4 {
                row.try_get::<_, Option<f32>>(i)
                    .map(|v| v.map(|x| Cell::Float(x.into())))
            } else {
                row.try_get::<_, Option<String>>(i)
                    .map(|v| v.map(Cell::Text))
            };
            cell.ok().flatten().unwrap_or(Cell::Null)
        })
        .collect()
}
