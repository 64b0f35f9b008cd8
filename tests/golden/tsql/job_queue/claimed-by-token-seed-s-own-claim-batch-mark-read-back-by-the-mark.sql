-- job_queue: claimed_by_token seed's own claim (batch_mark): read back by the mark
/* queuetop */ SELECT [ID], NULL AS qt_type, [Processing_Mark], [Attempts] FROM [dbo].[Job_Queue] WHERE [Processing_Mark] = CAST(? AS uniqueidentifier);
