-- work_queue: rows_in_states pending, after a job (queuetop jobs' keyset)
/* queuetop */ SELECT TOP (?) [work_queue_id], [name], [processed_flag] FROM [dbo].[work_queue] WITH (READPAST) WHERE ([processed_flag] = 0) AND ([work_queue_id] > CAST(? AS int)) ORDER BY [work_queue_id];
