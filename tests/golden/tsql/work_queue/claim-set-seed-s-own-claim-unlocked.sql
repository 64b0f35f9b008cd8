-- work_queue: claim_set seed's own claim (unlocked)
/* queuetop */ UPDATE [dbo].[work_queue] SET [processed_flag] = 1 WHERE [work_queue_id] = CAST(? AS int);
