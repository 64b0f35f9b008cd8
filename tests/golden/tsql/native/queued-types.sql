-- native: queued_types
/* queuetop */ SELECT DISTINCT qt_type FROM (SELECT TOP (?) [JobType] AS qt_type FROM [queuetop].[WorkQueue] WITH (NOLOCK) ORDER BY [WorkQueueID] DESC) AS qt_newest ORDER BY 1;
