-- work_queue: claim_set seed's own claim (select_update)
/* queuetop */ UPDATE [dbo].[work_queue] SET [processed_flag] = 1 WHERE [work_queue_id] = CAST(? AS int);
