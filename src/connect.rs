//! Connection settings for MariaDB and PostgreSQL: `--mariadb URL` / `--postgres URL`, the
//! `ANNBENCH_*_URL` env vars, the ann-benchmarks forks' `*_CONN_ARGS` conventions, and defaults
//! that find the servers `scripts/databases.sh` started.
