-- native: init: is there view WorkQueue_Pending
SELECT 1 WHERE OBJECT_ID(?) IS NOT NULL;
