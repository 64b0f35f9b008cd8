-- native: delete_state dead
/* queuetop */ DELETE FROM [queuetop].[WorkCompleted] WHERE [Outcome] = 'dead' AND [JobType] = CAST(? AS nvarchar(128));
