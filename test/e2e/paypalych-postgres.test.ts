// The end-to-end suite once more, with the relay on PostgreSQL (a database of its own on the
// machine's server, dropped afterwards; PGURL or RELAY_TEST_PG_URL names another server). The first import
// sets the switch before the suite's module reads it.
import './relay-on-postgres.ts';
import './paypalych.test.ts';
