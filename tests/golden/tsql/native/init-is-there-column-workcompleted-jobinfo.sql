-- native: init: is there column WorkCompleted.JobInfo
SELECT 1 WHERE COL_LENGTH(?, ?) IS NOT NULL;
