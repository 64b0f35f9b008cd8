-- native: init: is there table WorkCompleted
SELECT 1 WHERE OBJECT_ID(?) IS NOT NULL;
