-- native: init: is there table WorkQueue
SELECT 1 WHERE OBJECT_ID(?) IS NOT NULL;
