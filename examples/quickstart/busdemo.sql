-- The legacy documentation's example: buses, drivers, schedules and routes.
CREATE TABLE route (
    id text PRIMARY KEY,
    fare numeric(6,2)                      -- not in the Realm schema: stays in the database
);
CREATE TABLE schedule (
    id integer PRIMARY KEY,
    "Routeid" text REFERENCES route (id) ON DELETE SET NULL,
    departure timestamptz,
    arrival timestamptz
);
CREATE TABLE bus (
    vehicle integer PRIMARY KEY,
    "Scheduleid" integer REFERENCES schedule (id) ON DELETE SET NULL,
    fleet_id text,
    last_main timestamptz
);
CREATE TABLE driver (
    id integer PRIMARY KEY,
    "Busvehicle" integer REFERENCES bus (vehicle) ON DELETE SET NULL,
    name text,
    employ_date date
);
