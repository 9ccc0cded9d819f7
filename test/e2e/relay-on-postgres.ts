// Imported before paypalych.test.ts by paypalych-postgres.test.ts: the suite then puts the relay on PostgreSQL.
process.env.PAYPALYCH_E2E_RELAY_STORE = 'postgres';
