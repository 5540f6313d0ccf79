// StillwaterPostgres is built only with the package's `Postgres` trait; without it the module is empty.
#if Postgres
import PostgresNIO
import Stillwater
#endif
