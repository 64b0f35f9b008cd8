-- native: requeue dead retry delete
/* queuetop */ DELETE FROM [queuetop].[WorkCompleted] WHERE [WorkQueueID] IN (CAST(? AS bigint), CAST(? AS bigint)) AND [Outcome] = 'dead';
