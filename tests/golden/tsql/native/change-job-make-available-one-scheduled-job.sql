-- native: change_job make_available one scheduled job
/* queuetop */ UPDATE [queuetop].[WorkQueue] SET [AvailableDate] = SYSUTCDATETIME() WHERE (([RetrievedDate] IS NULL AND [AvailableDate] > SYSUTCDATETIME())) AND [WorkQueueID] = CAST(? AS bigint);
