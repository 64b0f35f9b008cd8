-- work_queue: rows_in_states pending rows
/* queuetop */ SELECT TOP (?) [work_queue_id], NULL, [name] FROM [dbo].[work_queue] WITH (READPAST) WHERE ([processed_flag] = 0) ORDER BY [work_queue_id];
