-- native: init: is there schema queuetop
SELECT 1 WHERE SCHEMA_ID(?) IS NOT NULL;
