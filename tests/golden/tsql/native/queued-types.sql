-- native: queued_types
/* queuetop */ SELECT DISTINCT [JobType] FROM [queuetop].[WorkQueue] WITH (NOLOCK) ORDER BY 1;
