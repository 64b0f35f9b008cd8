-- native: has_type
/* queuetop */ SELECT CASE WHEN EXISTS (SELECT 1 FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE [RetrievedDate] IS NULL AND [JobType] = CAST(? AS nvarchar(128))) OR EXISTS (SELECT 1 FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE [RetrievedDate] IS NOT NULL AND [JobType] = CAST(? AS nvarchar(128))) THEN 1 ELSE 0 END;
