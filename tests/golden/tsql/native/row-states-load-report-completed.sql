-- native: row_states load report: completed
/* queuetop */ SELECT [WorkQueueID], CASE WHEN [Outcome] = 'dead' THEN 'dead' ELSE NULL END FROM [queuetop].[WorkCompleted] WHERE [WorkQueueID] >= CAST(? AS bigint);
