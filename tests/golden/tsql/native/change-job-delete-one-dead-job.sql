-- native: change_job delete one dead job
/* queuetop */ DELETE FROM [queuetop].[WorkCompleted] WHERE ([Outcome] = 'dead') AND [WorkQueueID] = CAST(? AS bigint);
