-- native: init: create schema queuetop
CREATE SCHEMA [queuetop];
