-- native: has_job_type
/* queuetop */ SELECT CASE WHEN EXISTS (SELECT 1 FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE [JobType] = ? AND [RetrievedDate] IS NULL) OR EXISTS (SELECT 1 FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE [JobType] = ? AND [RetrievedDate] IS NOT NULL) THEN 1 ELSE 0 END;
