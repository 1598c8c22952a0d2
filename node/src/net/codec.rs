//! The request-response codec: a 4-byte big-endian length, then one codec frame holding a
//! [`Message`]. The length is checked against the limit before a byte of the frame is read.

use forager_protocol::codec::MAX_FRAME_BYTES;
use forager_protocol::wire::Message;
use futures::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use std::io;

/// The protocol name of forager's request-response exchanges.
pub const PROTOCOL: &str = "/forager/rpc/1";

/// Length-prefixed, size-limited frames of [`Message`].
#[derive(Debug, Clone, Copy, Default)]
pub struct MessageCodec;

/// Reads one length-prefixed frame and decodes it.
pub async fn read_message<T: AsyncRead + Unpin + Send>(io: &mut T) -> io::Result<Message> {
    let mut length = [0u8; 4];
    io.read_exact(&mut length).await?;
    let length = u32::from_be_bytes(length) as usize;
    if length > MAX_FRAME_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("message of {length} bytes exceeds the limit of {MAX_FRAME_BYTES}"),
        ));
    }
    let mut frame = vec![0u8; length];
    io.read_exact(&mut frame).await?;
    Message::decode(&frame, MAX_FRAME_BYTES)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
}

/// Encodes a message and writes it as one length-prefixed frame.
pub async fn write_message<T: AsyncWrite + Unpin + Send>(
    io: &mut T,
    message: &Message,
) -> io::Result<()> {
    let frame = message
        .encode()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
    io.write_all(&(frame.len() as u32).to_be_bytes()).await?;
    io.write_all(&frame).await?;
    io.close().await
}

impl libp2p::request_response::Codec for MessageCodec {
    type Protocol = &'static str;
    type Request = Message;
    type Response = Message;

    async fn read_request<T>(&mut self, _: &Self::Protocol, io: &mut T) -> io::Result<Message>
    where
        T: AsyncRead + Unpin + Send,
    {
        read_message(io).await
    }

    async fn read_response<T>(&mut self, _: &Self::Protocol, io: &mut T) -> io::Result<Message>
    where
        T: AsyncRead + Unpin + Send,
    {
        read_message(io).await
    }

    async fn write_request<T>(
        &mut self,
        _: &Self::Protocol,
        io: &mut T,
        request: Message,
    ) -> io::Result<()>
    where
        T: AsyncWrite + Unpin + Send,
    {
        write_message(io, &request).await
    }

    async fn write_response<T>(
        &mut self,
        _: &Self::Protocol,
        io: &mut T,
        response: Message,
    ) -> io::Result<()>
    where
        T: AsyncWrite + Unpin + Send,
    {
        write_message(io, &response).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_oversized_lengths_are_refused_unread() {
        futures::executor::block_on(async {
            let message = Message::from(forager_protocol::wire::Refusal::new(
                forager_protocol::wire::RefusalReason::NotServed,
                "no",
            ));
            let mut buffer = futures::io::Cursor::new(Vec::new());
            write_message(&mut buffer, &message).await.expect("writes");
            let mut reader = futures::io::Cursor::new(buffer.into_inner());
            assert_eq!(read_message(&mut reader).await.expect("reads"), message);

            let mut hostile = (u32::MAX).to_be_bytes().to_vec();
            hostile.extend_from_slice(&[0u8; 16]);
            let mut reader = futures::io::Cursor::new(hostile);
            let error = read_message(&mut reader).await.expect_err("refused");
            assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        });
    }
}
